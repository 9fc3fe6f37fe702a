"""Real TensorFlow and TensorBoard judge Towerflow's files, both ways.

Run by tools/tf_interop/run.sh (which installs the pinned TensorFlow and
TensorBoard into a virtual environment and builds the Towerflow programs):

  python3 tools/tf_interop/check.py --towerflow=bazel-bin/tools/towerflow \
      --driver=bazel-bin/tools/tf_interop/tf_interop_driver \
      --cifar10=bazel-bin/examples/cifar10/cifar10_train --work=/tmp/tf_interop

Towerflow -> TensorFlow: the CIFAR-10 example trains 20 steps on two virtual
CPU towers and writes its model_dir (checkpoints with their .meta, the
training GraphDef, event files, a SavedModel, a frozen serving graph);
TensorFlow reads the checkpoint (every tensor equal to Towerflow's reading),
imports the training graph and computes its losses from the checkpoint's
values (equal to Towerflow's on the same batch), takes up the run from the
checkpoint's .meta (import_meta_graph, saver.restore; three more steps with
Towerflow's losses), loads the SavedModel with tf.saved_model.load and
tf.compat.v1.saved_model.loader and imports the frozen graph (outputs equal
Towerflow's), loads a Keras-style model's SavedModel (predictions equal),
and TensorBoard's EventAccumulator reads the events (the scalars, the
activations' histograms, the graph); `tensorboard --logdir` serves them
(its HTTP API checked against the event files) and headless Chromium shows
the loss and the graph (tensorboard_browser.py; screenshots in --screenshots).

TensorFlow -> Towerflow: TensorFlow writes a tf.compat.v1 training graph with
v1 control flow (tf.cond, tf.while_loop) and its Saver checkpoint, and
Towerflow restores it and trains 10 steps with TensorFlow's losses, as it
does a recurrent network over TensorArrays (dynamic_rnn's construction); a TF 2
SavedModel of a tf.function with tf.cond and tf.while_loop inside (If, While,
StatefulPartitionedCall), a TF 2 SavedModel whose loops write a tf.TensorArray
and take a gradient (TF 2's TensorList ops), a frozen Keras LSTM and GRU, a TF 1-style eight-bit
network, and a Keras model's SavedModel run in Towerflow (`towerflow saved_model run`,
`towerflow run`) with TensorFlow's outputs; an object-based
tf.train.Checkpoint is read by Towerflow.

Each check prints one line, PASS or FAIL with what differed; the exit status
is 1 when any failed.
"""
import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import traceback
import urllib.parse
import zlib

import numpy as np
import tensorflow as tf
from google.protobuf import json_format
from tensorflow.python.util import deprecation

tf1 = tf.compat.v1
CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def run(*cmd):
    """The command's standard output; raises with its standard error."""
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {done.returncode}:\n{done.stderr}")
    return done.stdout


def as_array(tensor_json):
    """A tools/run.h TensorToJson value as a NumPy array."""
    dtypes = {"float": np.float32, "double": np.float64, "int32": np.int32, "int64": np.int64,
              "bool": np.bool_}
    values = np.array(tensor_json["values"], dtype=dtypes[tensor_json["dtype"]])
    return values.reshape(tensor_json["shape"])


def expect_close(what, got, want, rtol=1e-5, atol=1e-6):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        raise AssertionError(f"{what}: shape {got.shape}, expected {want.shape}")
    if got.dtype != want.dtype:
        raise AssertionError(f"{what}: dtype {got.dtype}, expected {want.dtype}")
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        worst = np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))
        raise AssertionError(f"{what}: differs by up to {worst:g} (rtol {rtol}, atol {atol})")


class Context:
    def __init__(self, args):
        self.towerflow = args.towerflow
        self.driver = args.driver
        self.work = args.work
        self.screenshots = args.screenshots
        os.makedirs(self.work, exist_ok=True)
        self.model_dir = os.path.join(self.work, "cifar10")
        rng = np.random.default_rng(1)
        self.images = os.path.join(self.work, "images.npy")
        self.labels = os.path.join(self.work, "labels.npy")
        np.save(self.images, rng.random((16, 28, 28, 1)).astype(np.float32))
        np.save(self.labels, (np.arange(16) % 10).astype(np.int32))
        # Towerflow's example writes the model_dir the first checks read.
        run(args.cifar10, "--num_towers=2", "--max_steps=20", "--log_every=10",
            "--save_summary_steps=5", f"--model_dir={self.model_dir}")
        exports = os.path.join(self.model_dir, "export")
        self.export = os.path.join(exports, sorted(os.listdir(exports))[-1])
        self.checkpoint = tf.train.latest_checkpoint(self.model_dir)


# ---- Towerflow -> TensorFlow


@check
def towerflow_checkpoint_in_tensorflow(ctx):
    """tf.train.load_checkpoint reads every tensor Towerflow wrote, equal."""
    reader = tf.train.load_checkpoint(ctx.checkpoint)
    ours = json.loads(run(ctx.driver, "checkpoint", f"--checkpoint={ctx.checkpoint}"))
    names = sorted(reader.get_variable_to_shape_map())
    if names != sorted(ours):
        raise AssertionError(f"TensorFlow lists {names}, Towerflow {sorted(ours)}")
    for name in names:
        theirs, mine = reader.get_tensor(name), as_array(ours[name])
        if theirs.dtype != mine.dtype or theirs.shape != mine.shape or not np.array_equal(theirs, mine):
            raise AssertionError(f"{name} differs")
    return f"{len(names)} tensors equal"


@check
def towerflow_training_graph_in_tensorflow(ctx):
    """The training GraphDef imports into TF and computes Towerflow's losses."""
    from google.protobuf import text_format
    graph_def = tf1.GraphDef()
    with open(os.path.join(ctx.model_dir, "graph.pbtxt")) as f:
        text_format.Parse(f.read(), graph_def)
    reader = tf.train.load_checkpoint(ctx.checkpoint)
    fetches = ["total_loss", "loss"]
    graph = tf1.Graph()
    with graph.as_default():
        tf1.import_graph_def(graph_def, name="")
        assigns = []
        for op in graph.get_operations():
            if op.type != "VarHandleOp":
                continue
            name = op.get_attr("shared_name").decode() or op.name
            if reader.has_tensor(name):
                with tf1.control_dependencies(None), graph.device(op.device):
                    assigns.append(tf1.raw_ops.AssignVariableOp(
                        resource=op.outputs[0], value=tf.constant(reader.get_tensor(name))))
        feeds = {"images:0": np.load(ctx.images), "labels:0": np.load(ctx.labels)}
        config = tf1.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=True)
        with tf1.Session(graph=graph, config=config) as session:
            session.run(assigns, feeds)
            theirs = session.run([f + ":0" for f in fetches], feeds)
    mine = json.loads(run(ctx.driver, "evaluate", f"--graph={ctx.model_dir}/graph.pbtxt",
                          f"--checkpoint={ctx.checkpoint}",
                          f"--feed=images=@{ctx.images},labels=@{ctx.labels}",
                          f"--fetch={','.join(fetches)}"))
    for name, value in zip(fetches, theirs):
        expect_close(name, as_array(mine[name]), value)
    return f"{len(graph_def.node)} nodes; " + ", ".join(
        f"{n} {float(v):.6f}" for n, v in zip(fetches, theirs))


def towerflow_signature_outputs(ctx):
    return json.loads(run(ctx.towerflow, "saved_model", "run", ctx.export, "--signature_def",
                          "serving_default", "--input", f"images=@{ctx.images}", "--json"))


@check
def towerflow_saved_model_in_tensorflow_2(ctx):
    """tf.saved_model.load runs the export's signature with Towerflow's outputs."""
    model = tf.saved_model.load(ctx.export)
    outputs = model.signatures["serving_default"](images=tf.constant(np.load(ctx.images)))
    mine = towerflow_signature_outputs(ctx)
    for key, value in outputs.items():
        expect_close(key, as_array(mine[key]), value.numpy())
    return f"signatures {sorted(model.signatures)}; outputs {sorted(outputs)} equal"


@check
def towerflow_saved_model_in_tensorflow_1(ctx):
    """tf.compat.v1's loader restores the export into a Session (its MetaGraph and Saver)."""
    mine = towerflow_signature_outputs(ctx)
    graph = tf1.Graph()
    with tf1.Session(graph=graph) as session:
        meta = tf1.saved_model.loader.load(session, ["serve"], ctx.export)
        signature = meta.signature_def["serving_default"]
        feeds = {signature.inputs["images"].name: np.load(ctx.images)}
        keys = sorted(signature.outputs)
        values = session.run([signature.outputs[k].name for k in keys], feeds)
    for key, value in zip(keys, values):
        expect_close(key, as_array(mine[key]), value)
    return f"outputs {keys} equal"


@check
def towerflow_run_continues_in_tensorflow(ctx):
    """TF takes up the run from the latest checkpoint's .meta (import_meta_graph,
    saver.restore, the train_op collection) with Towerflow's losses."""
    out = os.path.join(ctx.work, "resume")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(4)
    steps = 3
    for step in range(steps):
        np.save(os.path.join(out, f"images_{step}.npy"),
                rng.random((16, 28, 28, 1)).astype(np.float32))
        np.save(os.path.join(out, f"labels_{step}.npy"), rng.integers(0, 10, 16).astype(np.int32))
    meta = ctx.checkpoint + ".meta"
    graph = tf1.Graph()
    with graph.as_default():
        saver = tf1.train.import_meta_graph(meta)
        variables = {v.op.name for v in tf1.global_variables()}
        trainable = len(tf1.trainable_variables())
        (train_op,) = tf1.get_collection("train_op")
        global_step = tf1.train.get_global_step()
        config = tf1.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=True)
        with tf1.Session(graph=graph, config=config) as session:
            saver.restore(session, ctx.checkpoint)
            start = session.run(global_step)
            losses = []
            for step in range(steps):
                feeds = {f"{k}:0": np.load(os.path.join(out, f"{k}_{step}.npy"))
                         for k in ["images", "labels"]}
                loss, _ = session.run(["total_loss:0", train_op], feeds)
                losses.append(loss)
            end = session.run(global_step)
    saved = set(tf.train.load_checkpoint(ctx.checkpoint).get_variable_to_shape_map())
    if variables != saved:
        raise AssertionError(f"tf.global_variables() {sorted(variables ^ saved)} differ from the checkpoint's")
    if end != start + steps:
        raise AssertionError(f"global step {start} -> {end} in {steps} steps")
    mine = json.loads(run(ctx.driver, "train", f"--meta={meta}", f"--checkpoint={ctx.checkpoint}",
                          "--feeds=images,labels", f"--feed_dir={out}", f"--steps={steps}",
                          "--loss=total_loss"))
    expect_close("losses", np.array(mine["losses"], np.float32), np.array(losses, np.float32),
                 rtol=1e-4)
    return (f"{len(variables)} variables ({trainable} trainable), global step {start} -> {end}, "
            "losses " + " ".join(f"{v:.5f}" for v in losses))


@check
def towerflow_frozen_graph_in_tensorflow(ctx):
    """The frozen serving graph (Estimator::Export) imports with
    import_graph_def and gives Towerflow's outputs."""
    meta = tf1.MetaGraphDef()
    with open(os.path.join(ctx.model_dir, "frozen", "model.meta"), "rb") as f:
        meta.ParseFromString(f.read())
    variables = [n.name for n in meta.graph_def.node if n.op in ("VarHandleOp", "VariableV2")]
    if variables:
        raise AssertionError(f"not frozen: variables {variables}")
    signature = meta.signature_def["serving_default"]
    keys = sorted(signature.outputs)
    graph = tf1.Graph()
    with graph.as_default():
        tf1.import_graph_def(meta.graph_def, name="")
        # Its towers keep their devices: two CPUs, as Towerflow's.
        config = tf1.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=True)
        with tf1.Session(graph=graph, config=config) as session:
            theirs = session.run([signature.outputs[k].name for k in keys],
                                 {signature.inputs["images"].name: np.load(ctx.images)})
    path = os.path.join(ctx.work, "frozen.pb")
    with open(path, "wb") as f:
        f.write(meta.graph_def.SerializeToString())
    fetches = [signature.outputs[k].name for k in keys]
    mine = json.loads(run(ctx.driver, "evaluate", f"--graph={path}",
                          f"--checkpoint={ctx.checkpoint}",
                          f"--feed={signature.inputs['images'].name}=@{ctx.images}",
                          f"--fetch={','.join(fetches)}"))
    for key, name, value in zip(keys, fetches, theirs):
        expect_close(key, as_array(mine[name]), value)
    return f"{len(meta.graph_def.node)} nodes, no variables; outputs {keys} equal"


@check
def towerflow_keras_saved_model_in_tensorflow(ctx):
    """A Keras-style model trained on two replicas, saved as a SavedModel
    (SaveFormat::kSavedModel), gives Towerflow's predictions in TF (both loaders)."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(32, 6)).astype(np.float32)
    paths = {k: os.path.join(ctx.work, f"keras_{k}.npy") for k in "xy"}
    np.save(paths["x"], x)
    np.save(paths["y"], (np.arange(32) % 3).astype(np.int32))
    directory = os.path.join(ctx.work, "towerflow_keras")
    mine = as_array(json.loads(run(ctx.driver, "keras", f"--dir={directory}",
                                   f"--feed=x=@{paths['x']},y=@{paths['y']}"))["predictions"])
    signature = tf.saved_model.load(directory).signatures["serving_default"]
    (input_key,) = signature.structured_input_signature[1].keys()
    (output_key,) = signature.structured_outputs.keys()
    expect_close(f"TF 2 {output_key}", signature(**{input_key: tf.constant(x)})[output_key].numpy(),
                 mine)
    graph = tf1.Graph()
    with tf1.Session(graph=graph) as session:
        meta = tf1.saved_model.loader.load(session, ["serve"], directory)
        v1 = meta.signature_def["serving_default"]
        value = session.run(v1.outputs[output_key].name, {v1.inputs[input_key].name: x})
    expect_close(f"TF 1 {output_key}", value, mine)
    return f"{input_key} -> {output_key} [{mine.shape[0]}, {mine.shape[1]}] equal"


@check
def towerflow_events_in_tensorboard(ctx):
    """TensorBoard's EventAccumulator reads the scalars, the histograms and the graph."""
    from tensorboard.backend.event_processing import event_accumulator
    accumulator = event_accumulator.EventAccumulator(
        ctx.model_dir, size_guidance={event_accumulator.HISTOGRAMS: 0})
    accumulator.Reload()
    tags = accumulator.Tags()
    layers = ["conv1", "conv2", "local3", "local4", "softmax_linear"]
    scalars = ["loss", "global_step/sec", "learning_rate"] + [f"{l}/sparsity" for l in layers]
    for tag in scalars:
        if tag not in tags["scalars"]:
            raise AssertionError(f"no scalar {tag!r} among {tags['scalars']}")
    steps = [e.step for e in accumulator.Scalars("loss")]
    if steps != list(range(5, 21, 5)):
        raise AssertionError(f"loss at steps {steps}, expected every 5 to 20")
    for layer in layers:
        sparsity = [e.value for e in accumulator.Scalars(f"{layer}/sparsity")]
        if not all(0 <= v <= 1 for v in sparsity):
            raise AssertionError(f"{layer}/sparsity {sparsity} not fractions")
        histograms = accumulator.Histograms(f"{layer}/activations")
        if [h.step for h in histograms] != steps:
            raise AssertionError(f"{layer}/activations at steps {[h.step for h in histograms]}")
        for h in histograms:
            v = h.histogram_value
            if v.num <= 0 or sum(v.bucket) != v.num or v.min > v.max:
                raise AssertionError(f"{layer}/activations at step {h.step}: {v}")
    if [e.value for e in accumulator.Scalars("learning_rate")] != [np.float32(0.1)] * len(steps):
        raise AssertionError("learning_rate is not 0.1")
    if not tags["graph"] or len(accumulator.Graph().node) == 0:
        raise AssertionError("no graph")
    return (f"{len(tags['scalars'])} scalars, {len(tags['histograms'])} histograms at steps "
            f"{steps}, a graph of {len(accumulator.Graph().node)} nodes")


@check
def towerflow_run_in_tensorboard(ctx):
    """`tensorboard --logdir` serves the run: its HTTP API gives the event
    files' scalars, the histograms and the graph with its towers; headless
    Chromium shows the loss card with the last step's value and the graph,
    and the screenshots are kept."""
    from google.protobuf import text_format
    from tensorboard.backend.event_processing import event_accumulator
    import tensorboard_browser as browser

    accumulator = event_accumulator.EventAccumulator(ctx.model_dir)
    accumulator.Reload()
    with browser.TensorBoard(ctx.model_dir) as board:
        api = board.url + "/data"
        runs = browser.get_json(api + "/runs")
        if runs != ["."]:
            raise AssertionError(f"runs {runs}, expected ['.']")
        tags = browser.get_json(api + "/plugin/scalars/tags")["."]
        for tag in ["loss", "global_step/sec", "learning_rate"]:
            if tag not in tags:
                raise AssertionError(f"no scalar {tag!r} among {sorted(tags)}")
            points = browser.get_json(api + "/plugin/scalars/scalars?" +
                                      urllib.parse.urlencode({"run": ".", "tag": tag}))
            want = [(e.step, e.value) for e in accumulator.Scalars(tag)]
            if [(step, value) for _, step, value in points] != want:
                raise AssertionError(f"{tag}: TensorBoard serves {points}, the events hold {want}")
        histograms = browser.get_json(api + "/plugin/histograms/tags")["."]
        if "conv1/activations" not in histograms:
            raise AssertionError(f"no conv1/activations among the histograms {sorted(histograms)}")
        graph = tf1.GraphDef()
        text_format.Parse(browser.get_text(api + "/plugin/graphs/graph?run=.&conceptual=false"),
                          graph)
        # The towers' convolutions, each on its own CPU.
        towers = sorted({n.device for n in graph.node if n.op == "Conv2D"})
        if (len(graph.node) != len(accumulator.Graph().node) or
                towers != ["/device:CPU:0", "/device:CPU:1"]):
            raise AssertionError(f"the served graph has {len(graph.node)} nodes (the events' "
                                 f"{len(accumulator.Graph().node)}), convolutions on {towers}")
        _, last_step, last_loss = browser.get_json(
            api + "/plugin/scalars/scalars?run=.&tag=loss")[-1]
        detail = (f"{len(tags)} scalars (equal to the events'), {len(histograms)} histograms, "
                  f"a graph of {len(graph.node)} nodes")
        if ctx.screenshots is None:
            return detail + "; SKIPPED the browser: no headless Chromium (run.sh says why)"
        shots = browser.show_loss_and_graph(board.url, ctx.screenshots, last_step, last_loss)
    return detail + f"; Chromium showed loss {last_loss:.5g} at step {last_step}: " + ", ".join(shots)


# ---- TensorFlow -> Towerflow


def train_in_towerflow(ctx, out, graph, saver, prefix, losses):
    """Towerflow's driver restores `graph` from its checkpoint and trains it
    on the x_i/y_i batches TF saved in `out`; its losses must be TF's."""
    tf.io.write_graph(graph.as_graph_def(), out, "graph.pb", as_text=False)
    mine = json.loads(run(ctx.driver, "train", f"--graph={out}/graph.pb", f"--checkpoint={prefix}",
                          f"--filename_tensor={saver.saver_def.filename_tensor_name}",
                          f"--restore_op={saver.saver_def.restore_op_name}", "--feeds=x,y",
                          f"--feed_dir={out}", f"--steps={len(losses)}"))
    expect_close("losses", np.array(mine["losses"], np.float32), np.array(losses, np.float32))
    return f"{len(losses)} steps, losses " + " ".join(f"{v:.4f}" for v in losses)


@check
def tensorflow_v1_training_in_towerflow(ctx):
    """A tf.compat.v1 graph with tf.cond and tf.while_loop, restored from its
    Saver checkpoint, trains in Towerflow with TensorFlow's losses."""
    out = os.path.join(ctx.work, "v1_training")
    os.makedirs(out, exist_ok=True)
    tf1.disable_control_flow_v2()
    try:
        graph = tf1.Graph()
        with graph.as_default():
            x = tf1.placeholder(tf.float32, [None, 4], name="x")
            y = tf1.placeholder(tf.float32, [None, 1], name="y")
            w = tf1.get_variable("w", initializer=tf.constant([[0.1], [-0.2], [0.3], [0.05]]))
            b = tf1.get_variable("b", initializer=tf.constant([0.0]))
            pred = tf.matmul(x, w) + b
            err = pred - y
            per_example = tf.cond(tf.reduce_mean(tf.abs(err)) > 1.0,
                                  lambda: tf.abs(err) - 0.5, lambda: 0.5 * tf.square(err))
            _, acc = tf1.while_loop(lambda i, a: i < 3,
                                    lambda i, a: (i + 1, a + 0.1 * tf.tanh(pred)),
                                    [tf.constant(0), tf.zeros_like(pred)])
            loss = tf.identity(tf.reduce_mean(per_example) + tf.reduce_mean(tf.square(acc)),
                               name="loss")
            tf1.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
            saver = tf1.train.Saver()
            init = tf1.global_variables_initializer()
    finally:
        tf1.enable_control_flow_v2()
    ops = {op.type for op in graph.get_operations()}
    for needed in ["Switch", "Merge", "Enter", "Exit", "NextIteration", "StackPushV2"]:
        if needed not in ops:
            raise AssertionError(f"the graph has no {needed}: not v1 control flow")
    rng = np.random.default_rng(0)
    losses = []
    with tf1.Session(graph=graph) as session:
        session.run(init)
        prefix = saver.save(session, os.path.join(out, "model.ckpt"))
        for step in range(10):
            xs = rng.normal(size=(8, 4)).astype(np.float32)
            ys = xs @ np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32) + (3.0 if step % 3 == 0 else 0.0)
            np.save(os.path.join(out, f"x_{step}.npy"), xs)
            np.save(os.path.join(out, f"y_{step}.npy"), ys.astype(np.float32))
            value, _ = session.run([loss, "train"], {x: xs, y: ys})
            losses.append(value)
    return train_in_towerflow(ctx, out, graph, saver, prefix, losses)


@check
def tensorflow_v1_input_pipeline_in_towerflow(ctx):
    """The CIFAR-10 tutorial's TF 1 input pipeline (string_input_producer's
    queue of file names, a FixedLengthRecordReader, DecodeRaw, the label
    and depth-major image cut out and transposed, tf.train.batch's queue)
    built by TF: Towerflow runs the queue runners' enqueue ops once each, as
    a runner thread would, and dequeues TF's first batch; and from the
    MetaGraphDef that tf.compat.v1.train.export_meta_graph writes, it starts
    the queue runners of its collection (--queue_runners) and dequeues the
    same batch."""
    out = os.path.join(ctx.work, "v1_input_pipeline")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(1)
    files = []
    for i in range(2):  # CIFAR-10's binary format: a label byte, 3x32x32 pixel bytes
        files.append(os.path.join(out, f"data_batch_{i + 1}.bin"))
        with open(files[-1], "wb") as f:
            f.write(rng.integers(0, 256, size=3 * 3073, dtype=np.uint8).tobytes())
    graph = tf1.Graph()
    with graph.as_default(), deprecation.silence():  # the queue-based API's warnings
        filename_queue = tf1.train.string_input_producer(files, shuffle=False)
        key, value = tf1.FixedLengthRecordReader(record_bytes=3073).read(filename_queue)
        record = tf.io.decode_raw(value, tf.uint8)
        label = tf.cast(tf.strided_slice(record, [0], [1]), tf.int32)
        label.set_shape([1])  # as the tutorial does
        depth_major = tf.reshape(tf.strided_slice(record, [1], [3073]), [3, 32, 32])
        image = tf.cast(tf.transpose(depth_major, [1, 2, 0]), tf.float32)
        images, labels = tf1.train.batch([image, label], batch_size=4, num_threads=1,
                                         capacity=8)
        runners = tf1.get_collection(tf1.GraphKeys.QUEUE_RUNNERS)
    missing = {"FIFOQueueV2", "FixedLengthRecordReaderV2", "ReaderReadV2", "QueueEnqueueManyV2",
               "QueueDequeueManyV2"} - {op.type for op in graph.get_operations()}
    if missing:
        raise AssertionError(f"the input pipeline has no {sorted(missing)}")
    with tf1.Session(graph=graph) as session, deprecation.silence():
        coordinator = tf1.train.Coordinator()
        threads = tf1.train.start_queue_runners(session, coordinator)
        want_images, want_labels = session.run([images, labels])
        coordinator.request_stop()
        coordinator.join(threads, stop_grace_period_secs=10)
    path = os.path.join(out, "graph.pb")
    tf.io.write_graph(graph.as_graph_def(), out, "graph.pb", as_text=False)
    producer, batcher = [r.enqueue_ops[0].name for r in runners]
    targets = ["--target", producer] + ["--target", batcher] * 4
    got = json.loads(run(ctx.towerflow, "run", path, *targets, "--fetch", images.name,
                         "--fetch", labels.name, "--json"))
    expect_close("images", as_array(got[images.name]), want_images, rtol=0, atol=0)
    expect_close("labels", as_array(got[labels.name]), want_labels, rtol=0, atol=0)
    meta_path = os.path.join(out, "pipeline.meta")
    with graph.as_default(), deprecation.silence():
        tf1.train.export_meta_graph(filename=meta_path)
    got = json.loads(run(ctx.towerflow, "run", meta_path, "--queue_runners", "--fetch",
                         images.name, "--fetch", labels.name, "--json"))
    expect_close("images (queue runners)", as_array(got[images.name]), want_images, rtol=0,
                 atol=0)
    expect_close("labels (queue runners)", as_array(got[labels.name]), want_labels, rtol=0,
                 atol=0)
    return (f"batch of 4 images and labels {want_labels.ravel().tolist()} equal, with the "
            f"enqueue ops as targets and with the meta graph's {len(runners)} queue runners")


@check
def tensorflow_v1_staging_areas_in_towerflow(ctx):
    """tf_cnn_benchmarks' staging: TF's StagingArea takes a seeded random batch
    staged by two earlier steps, and an ordered MapStagingArea an element
    staged in two parts (a third draw of the same random op, and a count),
    taken without its key. Towerflow runs the puts as targets, one step each,
    and fetches what the gets take: TF's values, the random op's stream going
    on from one run signature to the next as in TF."""
    from tensorflow.python.ops import data_flow_ops  # StagingArea's home (tf.contrib's in TF 1)

    out = os.path.join(ctx.work, "v1_staging_areas")
    os.makedirs(out, exist_ok=True)
    graph = tf1.Graph()
    with graph.as_default():
        tf1.set_random_seed(4)
        batch = tf1.random.uniform([2, 3], seed=5)
        area = data_flow_ops.StagingArea([tf.float32], shapes=[[2, 3]], capacity=2)
        put = area.put([batch])
        (staged,) = area.get()
        logits = tf.reduce_sum(staged * 2.0, axis=1)
        by_key = data_flow_ops.MapStagingArea([tf.float32, tf.int64], ordered=True, capacity=4)
        key = tf.constant(3, tf.int64)
        part0 = by_key.put(key, [batch], indices=[0])
        part1 = by_key.put(key, [tf.constant(11, tf.int64)], indices=[1])
        got_key, got_values = by_key.get()
    ops = {op.type for op in graph.get_operations()}
    missing = {"Stage", "Unstage", "OrderedMapStage", "OrderedMapUnstageNoKey"} - ops
    if missing:
        raise AssertionError(f"the staging graph has no {sorted(missing)}")
    with tf1.Session(graph=graph) as session:
        session.run(put)
        session.run(put)
        want_logits = session.run(logits)
        session.run(part0)
        session.run(part1)
        want_key, want_values = session.run([got_key, got_values])
    tf.io.write_graph(graph.as_graph_def(), out, "graph.pb", as_text=False)
    path = os.path.join(out, "graph.pb")
    got = json.loads(run(ctx.towerflow, "run", path, "--target", put.name, "--target", put.name,
                         "--fetch", logits.name, "--json"))
    expect_close("logits of the first staged batch", as_array(got[logits.name]), want_logits)
    fetched = [got_key.name] + [v.name for v in got_values]
    targets = ["--target", put.name] * 2 + ["--target", part0.name, "--target", part1.name]
    got = json.loads(run(ctx.towerflow, "run", path, *targets,
                         *[a for name in fetched for a in ("--fetch", name)], "--json"))
    expect_close("the map's key", as_array(got[fetched[0]]), want_key, rtol=0, atol=0)
    expect_close("the map's batch (a third draw)", as_array(got[fetched[1]]), want_values[0])
    expect_close("the map's count", as_array(got[fetched[2]]), want_values[1], rtol=0, atol=0)
    return (f"logits {np.round(want_logits, 4).tolist()} of the first of two staged batches, and "
            f"key {int(want_key)} of the map's element staged in two parts, equal")


@check
def tensorflow_2_summary_writer_in_towerflow(ctx):
    """TF 2's tf.summary in a graph (create_file_writer; scalar, histogram,
    image and text through WriteSummary, the histogram's buckets and the
    image's PNG computed in the graph, a cond among them): Towerflow runs the
    writer's init, the writes and the flush, and its event file holds TF's
    tags, plugins, steps and tensors; TensorBoard's EventAccumulator reads it
    as TF's."""
    from tensorboard.backend.event_processing import event_accumulator

    out = os.path.join(ctx.work, "tf2_summary_writer")
    shutil.rmtree(out, ignore_errors=True)  # a new writer adds a file to what is there
    graph = tf.Graph()
    with graph.as_default():
        writer = tf.summary.create_file_writer(os.path.join(out, "logs"), max_queue=5)
        with writer.as_default():
            x = tf.constant([[0.5, 1.5], [2.0, -1.0]])
            tf.summary.scalar("loss", tf.reduce_mean(x), step=3)
            tf.summary.histogram("weights", x, step=3)
            tf.summary.image("picture", tf.reshape(tf.range(12, dtype=tf.float32) / 12.0,
                                                   [1, 2, 2, 3]), step=3)
            tf.summary.text("note", tf.constant("hello"), step=3)
        init = writer.init()
        flush = writer.flush()
    writes = [op.name for op in graph.get_operations() if op.type == "WriteSummary"]
    if len(writes) != 4:
        raise AssertionError(f"expected 4 WriteSummary ops, got {writes}")

    def read(logdir):
        files = [os.path.join(logdir, f) for f in sorted(os.listdir(logdir))]
        if len(files) != 1:
            raise AssertionError(f"{logdir} holds {files}, not one event file")
        values = {}
        for event in tf.compat.v1.train.summary_iterator(files[0]):
            for v in event.summary.value:
                values[v.tag] = (event.step, v.metadata.plugin_data.plugin_name,
                                 tf.make_ndarray(v.tensor))
        return files[0], values

    tf_logdir = os.path.join(out, "logs")
    with tf.compat.v1.Session(graph=graph) as session:
        session.run(init)
        for name in writes:
            session.run(graph.get_operation_by_name(name))
        session.run(flush)
    _, want = read(tf_logdir)
    # The same graph in Towerflow, writing to a directory of its own.
    graph_def = graph.as_graph_def()
    ours = os.path.join(out, "towerflow_logs")
    for node in graph_def.node:
        if node.op == "Const" and node.attr["value"].tensor.string_val == [tf_logdir.encode()]:
            node.attr["value"].tensor.string_val[0] = ours.encode()
    path = os.path.join(out, "graph.pb")
    with open(path, "wb") as f:
        f.write(graph_def.SerializeToString())
    targets = [init.name] + writes + [flush.name]
    run(ctx.towerflow, "run", path, *[a for t in targets for a in ("--target", t)])
    event_file, got = read(ours)
    if sorted(got) != sorted(want):
        raise AssertionError(f"tags {sorted(got)}, TF's {sorted(want)}")
    for tag, (step, plugin, tensor) in want.items():
        if got[tag][:2] != (step, plugin):
            raise AssertionError(f"{tag}: step and plugin {got[tag][:2]}, TF's {(step, plugin)}")
        if tensor.dtype == object:
            if got[tag][2].tolist() != tensor.tolist():
                raise AssertionError(f"{tag}: {got[tag][2].tolist()}, TF's {tensor.tolist()}")
        else:
            expect_close(tag, got[tag][2], tensor)
    accumulator = event_accumulator.EventAccumulator(
        ours, size_guidance={event_accumulator.TENSORS: 0})
    accumulator.Reload()
    tensors = sorted(accumulator.Tags()["tensors"])
    if tensors != sorted(want):
        raise AssertionError(f"TensorBoard reads tensors {tensors}, expected {sorted(want)}")
    return (f"{os.path.basename(event_file)}: {sorted(want)} at step 3 with TF's plugins and "
            f"tensors, read by TensorBoard")


@check
def tensorflow_v1_recurrent_training_in_towerflow(ctx):
    """A tf.compat.v1 recurrent network over TensorArrays (tf.nn.dynamic_rnn's
    construction: the inputs unstacked into a TensorArrayV3, a v1 while loop
    reading each step and writing each output, the outputs stacked), trained
    by GradientDescent (TensorArrayGradV3 and the reads' and writes'
    gradients through the loop), restored from its Saver checkpoint, trains
    in Towerflow with TensorFlow's losses."""
    out = os.path.join(ctx.work, "v1_rnn")
    os.makedirs(out, exist_ok=True)
    steps, batch, units = 5, 4, 3
    tf1.disable_control_flow_v2()
    try:
        graph = tf1.Graph()
        with graph.as_default():
            x = tf1.placeholder(tf.float32, [batch, steps, 2], name="x")
            y = tf1.placeholder(tf.float32, [batch, 1], name="y")
            w_in = tf1.get_variable("w_in", initializer=tf.constant([[0.3, -0.2, 0.1], [0.2, 0.4, -0.3]]))
            w_h = tf1.get_variable("w_h", initializer=tf.constant(0.5 * np.eye(units, dtype=np.float32)))
            b = tf1.get_variable("b", initializer=tf.zeros([units]))
            w_out = tf1.get_variable("w_out", initializer=tf.constant([[0.5], [-0.5], [0.25]]))
            inputs = tf1.TensorArray(tf.float32, steps).unstack(tf.transpose(x, [1, 0, 2]))
            outputs = tf1.TensorArray(tf.float32, steps)

            def body(t, h, ta):
                h = tf.tanh(tf.matmul(inputs.read(t), w_in) + tf.matmul(h, w_h) + b)
                return t + 1, h, ta.write(t, h)

            _, h, outputs = tf1.while_loop(lambda t, h, ta: t < steps, body,
                                           [tf.constant(0), tf.zeros([batch, units]), outputs])
            per_step = tf.reduce_mean(outputs.stack(), axis=0)  # mean over time
            pred = tf.matmul(per_step + h, w_out)
            loss = tf.identity(tf.reduce_mean(tf.square(pred - y)), name="loss")
            tf1.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
            saver = tf1.train.Saver()
            init = tf1.global_variables_initializer()
    finally:
        tf1.enable_control_flow_v2()
    ops = {op.type for op in graph.get_operations()}
    for needed in ["TensorArrayV3", "TensorArrayScatterV3", "TensorArrayReadV3",
                   "TensorArrayWriteV3", "TensorArrayGatherV3", "TensorArrayGradV3", "Enter"]:
        if needed not in ops:
            raise AssertionError(f"the graph has no {needed}")
    rng = np.random.default_rng(1)
    losses = []
    with tf1.Session(graph=graph) as session:
        session.run(init)
        prefix = saver.save(session, os.path.join(out, "model.ckpt"))
        for step in range(10):
            xs = rng.normal(size=(batch, steps, 2)).astype(np.float32)
            ys = xs.sum(axis=(1, 2))[:, None].astype(np.float32) * 0.2
            np.save(os.path.join(out, f"x_{step}.npy"), xs)
            np.save(os.path.join(out, f"y_{step}.npy"), ys)
            value, _ = session.run([loss, "train"], {x: xs, y: ys})
            losses.append(value)
    return train_in_towerflow(ctx, out, graph, saver, prefix, losses)


def towerflow_runs_saved_model(ctx, directory, inputs, signature="serving_default"):
    args = [ctx.towerflow, "saved_model", "run", directory, "--signature_def", signature, "--json"]
    for key, value in inputs.items():
        path = os.path.join(directory, f"input_{key}.npy")
        np.save(path, value)
        args += ["--input", f"{key}=@{path}"]
    return json.loads(run(*args))


@check
def tensorflow_2_saved_model_in_towerflow(ctx):
    """A tf.function with tf.cond and tf.while_loop (If, While and
    StatefulPartitionedCall in the SavedModel) gives TF's outputs."""
    class Model(tf.Module):
        def __init__(self):
            super().__init__()
            self.scale = tf.Variable([1.5, -0.5, 2.0], name="scale")

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
        def __call__(self, x):
            y = x * self.scale
            y = tf.cond(tf.reduce_sum(y) > 0, lambda: tf.nn.relu(y), lambda: -y)
            i = tf.constant(0)
            _, y = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, y * 0.5 + 1.0), [i, y])
            return {"y": y, "total": tf.reduce_sum(y, axis=1)}

    model = Model()
    directory = os.path.join(ctx.work, "tf2_saved_model")
    tf.saved_model.save(model, directory, signatures={"serving_default": model.__call__})
    x = np.random.default_rng(2).normal(size=(5, 3)).astype(np.float32)
    theirs = model(tf.constant(x))
    mine = towerflow_runs_saved_model(ctx, directory, {"x": x})
    for key in ["y", "total"]:
        expect_close(key, as_array(mine[key]), theirs[key].numpy())
    return "outputs y, total equal"


@check
def tensorflow_2_tensor_lists_in_towerflow(ctx):
    """TF 2's lists of tensors (TensorList ops on DT_VARIANT tensors): a
    SavedModel whose tf.function writes a tf.TensorArray in a loop and takes a
    gradient through another loop (its accumulators pushed and popped), and a
    Keras LSTM and GRU frozen into a GraphDef (their loops read the steps from
    a list; the freezing lowers them to v1 loops, so the lists pass Enter,
    Merge, Switch and Exit), give TF's outputs in Towerflow."""
    class Model(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable([[0.5, -0.25], [0.1, 0.3], [0.2, 0.2]], name="w")

        @tf.function(input_signature=[tf.TensorSpec([None, 5, 3], tf.float32, name="x")])
        def __call__(self, x):
            steps = tf.TensorArray(tf.float32, size=tf.shape(x)[1])
            total = tf.zeros(tf.shape(x)[::2])
            for t in tf.range(tf.shape(x)[1]):
                total = total + x[:, t] * x[:, t]
                steps = steps.write(t, total)
            with tf.GradientTape() as tape:
                tape.watch(x)
                h = tf.zeros([tf.shape(x)[0], 2])
                for t in tf.range(tf.shape(x)[1]):
                    h = tf.tanh(tf.matmul(x[:, t], self.w) + h)
                loss = tf.reduce_sum(h * h)
            return {"squares": steps.stack(), "loss": loss, "dx": tape.gradient(loss, x)}

    def op_types(graph_def):
        return ({n.op for n in graph_def.node} |
                {n.op for f in graph_def.library.function for n in f.node_def})

    def expect_ops(what, graph_def, needed):
        missing = set(needed) - op_types(graph_def)
        if missing:
            raise AssertionError(f"{what} has no {sorted(missing)}")

    x = np.random.default_rng(4).normal(size=(2, 5, 3)).astype(np.float32)
    model = Model()
    directory = os.path.join(ctx.work, "tf2_tensor_lists")
    tf.saved_model.save(model, directory, signatures={"serving_default": model.__call__})
    expect_ops("the function", model.__call__.get_concrete_function().graph.as_graph_def(),
               ["TensorListReserve", "TensorListSetItem", "TensorListStack",
                "TensorListPushBack", "TensorListPopBack", "EmptyTensorList", "StatelessWhile"])
    theirs = model(tf.constant(x))
    mine = towerflow_runs_saved_model(ctx, directory, {"x": x})
    for key in ["squares", "loss", "dx"]:
        expect_close(key, as_array(mine[key]), theirs[key].numpy())

    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)
    keras = tf.keras
    keras.utils.set_random_seed(4)
    lstm = keras.layers.LSTM(4, return_sequences=True)
    gru = keras.layers.GRU(3)
    frozen = convert_variables_to_constants_v2(
        tf.function(lambda x: gru(lstm(x))).get_concrete_function(
            tf.TensorSpec([2, 5, 3], tf.float32, name="x")))
    graph_def = frozen.graph.as_graph_def()
    expect_ops("the frozen Keras RNN", graph_def,
               ["TensorListFromTensor", "TensorListGetItem", "TensorListReserve", "Enter"])
    path = os.path.join(ctx.work, "keras_rnn.pb")
    with open(path, "wb") as f:
        f.write(graph_def.SerializeToString())
    np.save(os.path.join(ctx.work, "keras_rnn_x.npy"), x)
    fetch = frozen.outputs[0].name.split(":")[0]
    got = json.loads(run(ctx.towerflow, "run", path, "--feed",
                         f"x=@{os.path.join(ctx.work, 'keras_rnn_x.npy')}", "--fetch", fetch,
                         "--json"))
    expect_close("keras rnn", as_array(got[fetch]), frozen(tf.constant(x))[0].numpy())
    return "outputs squares, loss, dx and the Keras LSTM + GRU's equal"


@check
def tensorflow_2_text_in_towerflow(ctx):
    """Keras's TextVectorization (lower case, punctuation stripped by
    StaticRegexReplace, StringSplitV2, a vocabulary table, padding) with
    tf.strings' unicode_decode, regex_replace, split and format, and a
    tf.print (StringFormat, PrintV2) to a file, saved as a SavedModel, give
    TF's outputs in Towerflow and print what TF prints."""
    vectorize = tf.keras.layers.TextVectorization(
        max_tokens=20, output_sequence_length=6,
        vocabulary=["the", "cat", "sat", "on", "mat", "caf\u00e9"])
    printed = os.path.join(ctx.work, "text_printed.txt")

    class Model(tf.Module):
        def __init__(self):
            super().__init__()
            self.vectorize = vectorize

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
        def __call__(self, text):
            ids = self.vectorize(text)
            tf.print("ids", ids[0], output_stream="file://" + printed)
            return {
                "ids": ids,
                "chars": tf.strings.unicode_decode(text, "UTF-8").to_tensor(default_value=-1),
                "words": tf.strings.split(tf.strings.regex_replace(text, "[aeiou]", "_")).to_tensor(),
                "summary": tf.strings.format("ids {} first {}", (ids, text[0]), summarize=2),
            }

    model = Model()
    directory = os.path.join(ctx.work, "tf2_text")
    tf.saved_model.save(model, directory, signatures={"serving_default": model.__call__})
    text = ["The CAT sat, on the mat!", "Caf\u00e9 au lait\u2026", ""]
    theirs = model(tf.constant(text))
    with open(printed) as f:
        tf_printed = f.read()
    os.remove(printed)
    mine = json.loads(run(ctx.towerflow, "saved_model", "run", directory, "--signature_def",
                          "serving_default", "--json", "--input", "text=" + json.dumps(text)))
    for key in ["ids", "chars"]:
        expect_close(key, as_array(mine[key]), theirs[key].numpy())
    for key in ["words", "summary"]:
        want = [w.decode() for w in np.ravel(theirs[key].numpy())]
        if mine[key]["values"] != want or mine[key]["shape"] != list(theirs[key].shape):
            raise AssertionError(f"{key}: Towerflow {mine[key]}, TensorFlow {want}")
    with open(printed) as f:
        if f.read() != tf_printed:
            raise AssertionError(f"tf.print: Towerflow printed {open(printed).read()!r}, "
                                 f"TensorFlow {tf_printed!r}")
    return "outputs ids, chars, words, summary and the printed line equal"


@check
def tensorflow_2_sequence_examples_in_towerflow(ctx):
    """tf.io.parse_sequence_example, parse_single_sequence_example and
    parse_example with every kind of feature (FixedLen, VarLen, Ragged,
    FixedLenSequence) in a SavedModel give TF's outputs for the same
    serialized tf.SequenceExamples and tf.Examples (ZLIB-compressed, and in
    JSON through tf.io.decode_json_example)."""
    context = {"label": tf.io.FixedLenFeature([], tf.int64, default_value=-1),
               "tags": tf.io.VarLenFeature(tf.string),
               "weights": tf.io.RaggedFeature(tf.float32)}
    sequence = {"frames": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
                "ids": tf.io.VarLenFeature(tf.int64),
                "words": tf.io.RaggedFeature(tf.string, row_splits_dtype=tf.int32)}
    example = {"v": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True,
                                                  default_value=-1.0),
               "r": tf.io.RaggedFeature(tf.int64, row_splits_dtype=tf.int32)}

    class Model(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="sequences"),
                                      tf.TensorSpec([None], tf.string, name="examples"),
                                      tf.TensorSpec([None], tf.string, name="json")])
        def __call__(self, sequences, examples, json_examples):
            sequences = tf.io.decode_base64(sequences)
            c, f, lengths = tf.io.parse_sequence_example(sequences, context, sequence)
            c1, f1 = tf.io.parse_single_sequence_example(sequences[0], context, sequence)
            e = tf.io.parse_example(
                tf.io.decode_compressed(tf.io.decode_base64(examples), "ZLIB"), example)
            j = tf.io.parse_example(tf.io.decode_json_example(json_examples), example)
            return {"label": c["label"], "tags": tf.sparse.to_dense(c["tags"], ""),
                    "weights": c["weights"].to_tensor(-1.0), "frames": f["frames"],
                    "lengths": lengths["frames"], "ids": tf.sparse.to_dense(f["ids"]),
                    "words": f["words"].to_tensor(""), "label1": c1["label"],
                    "frames1": f1["frames"], "ids1": tf.sparse.to_dense(f1["ids"]),
                    "words1": f1["words"].to_tensor(""), "v": e["v"], "r": e["r"].to_tensor(-1), "json_v": j["v"],
                    "json_r": j["r"].to_tensor(-1)}

    def feature(values):
        if isinstance(values[0], float):
            return tf.train.Feature(float_list=tf.train.FloatList(value=values))
        if isinstance(values[0], int):
            return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))

    def sequence_example(ctx_features, lists):
        s = tf.train.SequenceExample()
        for key, values in ctx_features.items():
            s.context.feature[key].CopyFrom(feature(values))
        for key, steps in lists.items():
            for step in steps:
                s.feature_lists.feature_list[key].feature.add().CopyFrom(feature(step))
        return s.SerializeToString()

    sequences = [
        sequence_example({"label": [3], "tags": [b"a", b"b"], "weights": [0.5, 1.5]},
                         {"frames": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
                          "ids": [[1], [2, 3]], "words": [[b"x"], [b"y", b"z"]]}),
        sequence_example({"weights": [2.5]}, {"frames": [[7.0, 8.0]], "ids": [[4, 5, 6]]}),
        sequence_example({"label": [9], "tags": [b"c"]}, {"words": [[b"w"]]})]
    examples = [tf.train.Example(features=tf.train.Features(feature=f))
                for f in [{"v": feature([1.0, 2.0, 3.0, 4.0]), "r": feature([7, 8])},
                          {"r": feature([9])}, {"v": feature([5.0, 6.0])}]]
    json_examples = [json_format.MessageToJson(e) for e in examples]
    examples = [zlib.compress(e.SerializeToString()) for e in examples]
    model = Model()
    directory = os.path.join(ctx.work, "tf2_sequence_examples")
    tf.saved_model.save(model, directory, signatures={"serving_default": model.__call__})
    encode = lambda items: [base64.urlsafe_b64encode(x).decode() for x in items]
    theirs = model(tf.constant(encode(sequences)), tf.constant(encode(examples)),
                   tf.constant(json_examples))
    mine = json.loads(run(ctx.towerflow, "saved_model", "run", directory, "--signature_def",
                          "serving_default", "--json",
                          "--input", "sequences=" + json.dumps(encode(sequences)),
                          "--input", "examples=" + json.dumps(encode(examples)),
                          "--input", "json=" + json.dumps(json_examples)))
    for key in ["label", "weights", "frames", "lengths", "ids", "label1", "frames1", "ids1",
                "v", "r", "json_v", "json_r"]:
        expect_close(key, as_array(mine[key]), theirs[key].numpy())
    for key in ["tags", "words", "words1"]:
        want = [w.decode() for w in np.ravel(theirs[key].numpy())]
        if mine[key]["values"] != want or mine[key]["shape"] != list(theirs[key].shape):
            raise AssertionError(f"{key}: Towerflow {mine[key]}, TensorFlow {want}")
    return "15 outputs of three parsers equal"


@check
def tensorflow_eight_bit_inference_in_towerflow(ctx):
    """A TF 1-style eight-bit network (what TF's quantize_nodes transform
    writes: QuantizeV2, QuantizedConv2D, RequantizationRange, Requantize,
    QuantizedBiasAdd, QuantizeDownAndShrinkRange, QuantizedRelu,
    QuantizedMaxPool/AvgPool, QuantizedConcat, QuantizedAdd, QuantizedMul,
    QuantizedReshape, QuantizedMatMul, Dequantize) in a SavedModel gives
    TF's integers, so its dequantized outputs are TF's to the bit."""
    rng = np.random.default_rng(8)
    raw = tf.raw_ops

    # Weights as quint8 constants made inside the function (TF saves a
    # captured quint8 tensor as uint8, and then cannot load its own model).
    filt_bytes, bias_bytes, dense_bytes = (
        rng.integers(0, 256, size=shape, dtype=np.uint8) for shape in ([3, 3, 2, 4], [4], [16, 5]))
    fl, fh, bl, bh, dl, dh = -0.5, 0.75, -0.2, 0.3, -0.4, 0.4

    def requantize(x, lo, hi):
        r_lo, r_hi = raw.RequantizationRange(input=x, input_min=lo, input_max=hi)
        return raw.Requantize(input=x, input_min=lo, input_max=hi, requested_output_min=r_lo,
                              requested_output_max=r_hi, out_type=tf.quint8)

    class Model(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 6, 6, 2], tf.float32, name="image")])
        def __call__(self, image):
            filt, bias, dense = (tf.bitcast(tf.constant(b), tf.quint8)
                                 for b in (filt_bytes, bias_bytes, dense_bytes))
            x, lo, hi = raw.QuantizeV2(input=image, min_range=tf.reduce_min(image),
                                       max_range=tf.reduce_max(image), T=tf.quint8)
            c, c_lo, c_hi = raw.QuantizedConv2D(input=x, filter=filt, min_input=lo, max_input=hi,
                                                min_filter=fl, max_filter=fh,
                                                strides=[1, 1, 1, 1], padding="SAME")
            c, c_lo, c_hi = requantize(c, c_lo, c_hi)
            b, b_lo, b_hi = raw.QuantizedBiasAdd(input=c, bias=bias, min_input=c_lo,
                                                 max_input=c_hi, min_bias=bl, max_bias=bh,
                                                 out_type=tf.qint32)
            b, b_lo, b_hi = raw.QuantizeDownAndShrinkRange(input=b, input_min=b_lo,
                                                           input_max=b_hi, out_type=tf.quint8)
            r, r_lo, r_hi = raw.QuantizedRelu(features=b, min_features=b_lo, max_features=b_hi,
                                              out_type=tf.quint8)
            r6, r6_lo, r6_hi = raw.QuantizedRelu6(features=b, min_features=b_lo,
                                                  max_features=b_hi, out_type=tf.quint8)
            window = dict(ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
            m, m_lo, m_hi = raw.QuantizedMaxPool(input=r, min_input=r_lo, max_input=r_hi, **window)
            a, a_lo, a_hi = raw.QuantizedAvgPool(input=r6, min_input=r6_lo, max_input=r6_hi,
                                                 **window)
            s, s_lo, s_hi = raw.QuantizedAdd(x=m, y=a, min_x=m_lo, max_x=m_hi, min_y=a_lo,
                                             max_y=a_hi)
            s, s_lo, s_hi = requantize(s, s_lo, s_hi)
            p, p_lo, p_hi = raw.QuantizedMul(x=m, y=a, min_x=m_lo, max_x=m_hi, min_y=a_lo,
                                             max_y=a_hi)
            p, p_lo, p_hi = requantize(p, p_lo, p_hi)
            j, j_lo, j_hi = raw.QuantizedConcat(concat_dim=3, values=[s, p],
                                                input_mins=[s_lo, p_lo], input_maxes=[s_hi, p_hi])
            flat, f_lo, f_hi = raw.QuantizedReshape(tensor=j, shape=[-1, 16, 9], input_min=j_lo,
                                                    input_max=j_hi)
            flat = tf.reshape(tf.transpose(tf.bitcast(flat, tf.uint8), [0, 2, 1]), [-1, 16])
            flat = tf.bitcast(flat, tf.quint8)
            y, y_lo, y_hi = raw.QuantizedMatMul(a=flat, b=dense, min_a=f_lo, max_a=f_hi,
                                                min_b=dl, max_b=dh)
            y, y_lo, y_hi = requantize(y, y_lo, y_hi)
            return {"logits": raw.Dequantize(input=y, min_range=y_lo, max_range=y_hi),
                    "features": raw.Dequantize(input=j, min_range=j_lo, max_range=j_hi)}

    model = Model()
    directory = os.path.join(ctx.work, "eight_bit")
    tf.saved_model.save(model, directory, signatures={"serving_default": model.__call__})
    image = rng.normal(size=(2, 6, 6, 2)).astype(np.float32)
    theirs = model(tf.constant(image))
    mine = towerflow_runs_saved_model(ctx, directory, {"image": image})
    for key in ["logits", "features"]:
        expect_close(key, as_array(mine[key]), theirs[key].numpy(), rtol=0, atol=0)
    return "outputs logits and features equal to the bit"


@check
def tensorflow_2_spectrograms_in_towerflow(ctx):
    """Audio features as TF 2 writes them (complex numbers and the FFTs):
    tf.signal.stft's magnitudes (RFFT, ComplexAbs) turned into a log-mel
    spectrogram, the phases (Angle), the signal back through
    tf.signal.inverse_stft (IRFFT) and a 2-D FFT's power, from a SavedModel,
    give TF's outputs in Towerflow."""
    class Model(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 400], tf.float32, name="audio")])
        def __call__(self, audio):
            stft = tf.signal.stft(audio, frame_length=64, frame_step=32, fft_length=64)
            magnitude = tf.abs(stft)
            mel = tf.signal.linear_to_mel_weight_matrix(16, 33, 8000, 80.0, 3800.0)
            log_mel = tf.math.log(tf.tensordot(magnitude, mel, 1) + 1e-6)
            back = tf.signal.inverse_stft(
                stft, 64, 32, 64,
                window_fn=tf.signal.inverse_stft_window_fn(32))
            image = tf.complex(audio[:, :64], audio[:, 64:128])
            power = tf.math.real(tf.signal.fft(image) * tf.math.conj(tf.signal.fft(image)))
            return {"log_mel": log_mel, "phase": tf.math.angle(stft), "back": back,
                    "power": power}

    model = Model()
    directory = os.path.join(ctx.work, "tf2_spectrograms")
    tf.saved_model.save(model, directory, signatures={"serving_default": model.__call__})
    t = np.arange(400, dtype=np.float32) / 8000
    audio = np.stack([np.sin(2 * np.pi * 440 * t), np.sin(2 * np.pi * 1000 * t) * np.exp(-t * 20)])
    audio = (audio + 0.01 * np.random.default_rng(5).normal(size=audio.shape)).astype(np.float32)
    theirs = model(tf.constant(audio))
    mine = towerflow_runs_saved_model(ctx, directory, {"audio": audio})
    for key, tolerance in [("log_mel", 1e-4), ("back", 1e-5), ("power", 1e-4)]:
        expect_close(key, as_array(mine[key]), theirs[key].numpy(), rtol=tolerance, atol=tolerance)
    # Phases of bins with no energy are noise's: compared where |X| > 1e-3.
    stft = tf.signal.stft(audio, frame_length=64, frame_step=32, fft_length=64).numpy()
    strong = np.abs(stft) > 1e-3
    expect_close("phase", as_array(mine["phase"])[strong], theirs["phase"].numpy()[strong],
                 rtol=1e-4, atol=1e-4)
    return "outputs log_mel, phase, back and power equal"


@check
def tensorflow_speech_front_end_in_towerflow(ctx):
    """The speech-commands tutorial's front end (tf.audio's WAV codec, then
    AudioSpectrogram and Mfcc, then a linear classifier), from a SavedModel:
    the samples through EncodeWav and DecodeWav, the spectrogram, the MFCCs
    and the class probabilities are TF's in Towerflow."""
    weights = np.random.default_rng(7).normal(size=(13, 4)).astype(np.float32)

    class Model(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 1], tf.float32, name="samples")])
        def __call__(self, samples):
            wav = tf.audio.encode_wav(samples, 8000)
            audio, rate = tf.audio.decode_wav(wav, desired_channels=1, desired_samples=1000)
            spectrogram = tf.raw_ops.AudioSpectrogram(input=audio, window_size=120, stride=40,
                                                      magnitude_squared=True)
            mfcc = tf.raw_ops.Mfcc(spectrogram=spectrogram, sample_rate=rate,
                                   upper_frequency_limit=3800.0, filterbank_channel_count=20,
                                   dct_coefficient_count=13)
            logits = tf.matmul(tf.reduce_mean(mfcc, axis=1), weights)
            return {"audio": audio, "spectrogram": spectrogram, "mfcc": mfcc,
                    "probabilities": tf.nn.softmax(logits)}

    model = Model()
    directory = os.path.join(ctx.work, "tf_speech_front_end")
    tf.saved_model.save(model, directory, signatures={"serving_default": model.__call__})
    t = np.arange(900, dtype=np.float32) / 8000
    samples = (0.6 * np.sin(2 * np.pi * 440 * t) * np.exp(-t * 8)
               + 0.05 * np.random.default_rng(8).normal(size=t.shape)).astype(np.float32)[:, None]
    theirs = model(tf.constant(samples))
    mine = towerflow_runs_saved_model(ctx, directory, {"samples": samples})
    expect_close("audio", as_array(mine["audio"]), theirs["audio"].numpy(), rtol=0, atol=0)
    for key in ["spectrogram", "mfcc", "probabilities"]:
        expect_close(key, as_array(mine[key]), theirs[key].numpy(), rtol=1e-4, atol=1e-5)
    return "outputs audio, spectrogram, mfcc and probabilities equal"


@check
def keras_saved_model_in_towerflow(ctx):
    """A Keras model's SavedModel gives Keras's outputs."""
    keras = tf.keras
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input(shape=(6,), name="features"),
                              keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(3, activation="softmax")])
    x = np.random.default_rng(3).normal(size=(4, 6)).astype(np.float32)
    theirs = model(x).numpy()
    directory = os.path.join(ctx.work, "keras_saved_model")
    model.export(directory, verbose=False)
    loaded = tf.saved_model.load(directory)
    signature = loaded.signatures["serving_default"]
    (input_key,) = signature.structured_input_signature[1].keys()
    (output_key,) = signature.structured_outputs.keys()
    mine = towerflow_runs_saved_model(ctx, directory, {input_key: x})
    expect_close(output_key, as_array(mine[output_key]), theirs)
    return f"{input_key} -> {output_key} equal"


@check
def tensorflow_object_checkpoint_in_towerflow(ctx):
    """Towerflow lists and reads an object-based tf.train.Checkpoint."""
    class Net(tf.Module):
        def __init__(self):
            super().__init__()
            self.kernel = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
            self.step = tf.Variable(7, dtype=tf.int64)

    prefix = tf.train.Checkpoint(net=Net(), bias=tf.Variable([0.25, -1.0])).write(
        os.path.join(ctx.work, "object_checkpoint", "ckpt"))
    mine = json.loads(run(ctx.driver, "checkpoint", f"--checkpoint={prefix}"))
    reader = tf.train.load_checkpoint(prefix)
    names = sorted(reader.get_variable_to_shape_map())
    if sorted(mine) != names:
        raise AssertionError(f"Towerflow lists {sorted(mine)}, TensorFlow {names}")
    compared = 0
    for name in names:
        value = reader.get_tensor(name)
        if isinstance(value, bytes) or value.dtype == object:
            continue  # the object graph (a serialized proto), compared as bytes elsewhere
        expect_close(name, as_array(mine[name]), value, rtol=0, atol=0)
        compared += 1
    listing = run(ctx.towerflow, "checkpoint", prefix)
    if "net/kernel/.ATTRIBUTES/VARIABLE_VALUE" not in listing:
        raise AssertionError("`towerflow checkpoint` does not list net/kernel")
    return f"{len(names)} tensors listed, {compared} values equal"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--towerflow", required=True)
    parser.add_argument("--driver", required=True)
    parser.add_argument("--cifar10", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--screenshots",
                        help="where headless Chromium's pictures of TensorBoard go; without it "
                             "the browser is not used")
    args = parser.parse_args()
    print(f"TensorFlow {tf.__version__}")
    ctx = Context(args)
    failed = 0
    for fn in CHECKS:
        try:
            detail = fn(ctx)
            print(f"PASS {fn.__name__}: {detail}")
        except Exception as e:  # every failure is reported, the others still run
            failed += 1
            print(f"FAIL {fn.__name__}: {e}")
            traceback.print_exc(file=sys.stdout)
    print(f"{len(CHECKS) - failed} of {len(CHECKS)} TensorFlow interop checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
