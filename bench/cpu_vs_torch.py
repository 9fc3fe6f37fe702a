"""Towerflow's example training programs against the same models in PyTorch
on the CPU, side by side: the two take turns, round after round, so that a
load on the machine falls on both, and the table gives the median step time
of each, their ratio and each side's peak resident memory.

Towerflow's side is the example program end to end (examples/resnet or
examples/cifar10: its input pipeline on random CIFAR-10 records, the
Estimator, one tower, batch 128), timed by its own step log over the steps
after the first `warmup`; PyTorch's is bench/models_torch.py (the same model,
forward, backward and update on a fixed batch, `--threads` threads).

resnet50 is ImageNet's ResNet-50 v1 at batch 32 on synthetic 224x224 images
(resnet_train --dataset=imagenet --use_synthetic_data) against torchvision's
resnet50.

With --unoptimized, each round also runs Towerflow with --graph_optimizer=false
(the graph as written), for the optimizer's gain side by side.

With --inference, the CIFAR-10 model is trained for 2 steps and exported, and
its SavedModel's serving signature (bench/inference_bench: the session's
graph optimizer on and off) is timed against the PyTorch model in eval mode
under no_grad, at batch 1 and 128.

With --torch_python given more than once, each round runs PyTorch under
each of those interpreters (Debian's PyTorch 1.13 and a current 2.x from
PyPI in a virtual environment), a column pair for each.

  tools/bootstrap.sh && apt-get install -y python3-torch
  python3 -m venv ~/torch2 && ~/torch2/bin/pip install torch      # optional: PyTorch 2.x
  bazel build //examples/resnet:resnet_train //examples/cifar10:cifar10_train //bench:inference_bench
  /usr/bin/python3 bench/cpu_vs_torch.py [--models resnet20,resnet32,cifar10] [--rounds 3] [--unoptimized]
      [--torch_python /usr/bin/python3 --torch_python ~/torch2/bin/python]
  /usr/bin/python3 bench/cpu_vs_torch.py --inference
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
STEP = re.compile(r"step (\d+), loss = \S+ \(\S+ examples/sec; ([0-9.]+) sec/batch\)")
TORCH = re.compile(r"([0-9.]+) ms/step")


def run(argv, env=None):
    """Runs argv; returns its output (stdout and stderr) and peak RSS in MB."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{argv[0]} failed ({proc.returncode}):\n{out}")
    return out, usage.ru_maxrss / 1024


def write_cifar10(directory, records=1000):
    """CIFAR-10 binary files of random images (the work does not depend on the pixels)."""
    for name in ["data_batch_%d" % i for i in range(1, 6)] + ["test_batch"]:
        with open(os.path.join(directory, name + ".bin"), "wb") as f:
            for i in range(records):
                f.write(bytes([i % 10]) + os.urandom(3072))


# The example program of each model, and its flags.
TOWERFLOW_MODELS = {
    "cifar10": ("examples/cifar10/cifar10_train", []),
    "resnet20": ("examples/resnet/resnet_train", ["--resnet_size=20"]),
    "resnet32": ("examples/resnet/resnet_train", ["--resnet_size=32"]),
    "resnet56": ("examples/resnet/resnet_train", ["--resnet_size=56"]),
    # ImageNet's ResNet-50 v1 on synthetic 224x224 batches (the official
    # models' --use_synthetic_data), against torchvision's resnet50.
    "resnet50": ("examples/resnet/resnet_train",
                 ["--dataset=imagenet", "--use_synthetic_data", "--resnet_size=50",
                  "--data_format=channels_last"]),
}
# The batch of each model (128 but where said).
BATCH = {"resnet50": 32}


def run_towerflow(model, data_dir, steps, log_every, extra=(), env=None):
    """Trains `model` for `steps` (one tower, batch 128, no evaluation) in a
    fresh model_dir; returns its output and peak RSS in MB."""
    program, flags = TOWERFLOW_MODELS[model]
    with tempfile.TemporaryDirectory() as model_dir:
        return run([os.path.join(ROOT, "bazel-bin", program), *flags, "--data_dir=" + data_dir,
                    "--model_dir=" + model_dir, "--num_towers=1",
                    "--batch_size=%d" % BATCH.get(model, 128),
                    "--max_steps=%d" % steps, "--log_every=%d" % log_every, "--eval=false",
                    *extra], env=env)


def towerflow_step(model, data_dir, steps, warmup, log_every, extra=()):
    out, rss = run_towerflow(model, data_dir, steps, log_every, extra)
    # Each line's sec/batch is the mean over the `log_every` steps before it.
    times = [float(t) for step, t in STEP.findall(out) if int(step) > warmup]
    if not times:
        sys.exit(f"no step lines after step {warmup} in:\n{out}")
    return statistics.mean(times), rss


def torch_step(model, threads, steps, extra=(), python=sys.executable):
    out, rss = run([python, os.path.join(HERE, "models_torch.py"), "--model", model,
                    "--device", "cpu", "--threads", str(threads), "--steps", str(steps),
                    "--batch", str(BATCH.get(model, 128)), *extra])
    return float(TORCH.search(out).group(1)) / 1e3, rss


def torch_version(python):
    out, _ = run([python, "-c", "import torch; print(torch.__version__)"])
    return out.strip().splitlines()[-1].split("+")[0]


INFERENCE = re.compile(r"batch (\d+): optimized ([0-9.]+) ms/batch, as written ([0-9.]+) ms/batch")


def inference(data_dir, rounds, threads):
    """The exported CIFAR-10 model's serving signature against PyTorch's eval forward."""
    with tempfile.TemporaryDirectory() as model_dir:
        run([os.path.join(ROOT, "bazel-bin/examples/cifar10/cifar10_train"),
             "--data_dir=" + data_dir, "--model_dir=" + model_dir, "--num_towers=1",
             "--max_steps=2", "--eval=false"])
        export = os.path.join(model_dir, "export")
        export = os.path.join(export, sorted(os.listdir(export))[-1])
        results = {}  # batch -> ([optimized], [as written], [torch])
        for _ in range(rounds):
            out, _ = run([os.path.join(ROOT, "bazel-bin/bench/inference_bench"),
                          "--saved_model=" + export, "--rounds=1", "--batch_sizes=1,128",
                          "--threads=%d" % threads])
            for batch, optimized, plain in INFERENCE.findall(out):
                r = results.setdefault(int(batch), ([], [], []))
                r[0].append(float(optimized))
                r[1].append(float(plain))
                seconds, _ = torch_step("cifar10", threads, 50,
                                        ["--inference", "--batch", batch])
                r[2].append(seconds * 1e3)
    print(f"{'batch':<6} {'towerflow ms':>13} {'as written ms':>14} {'torch ms':>9} "
          f"{'torch/towerflow':>16}")
    for batch, (optimized, plain, torch) in sorted(results.items()):
        t, w, p = (statistics.median(v) for v in (optimized, plain, torch))
        print(f"{batch:<6} {t:>13.3f} {w:>14.3f} {p:>9.3f} {p / t:>15.2f}x", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="resnet20,resnet32,cifar10")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=40, help="Towerflow's steps per run")
    parser.add_argument("--warmup", type=int, default=10, help="Towerflow's steps not timed")
    parser.add_argument("--torch_steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--unoptimized", action="store_true",
                        help="also run Towerflow with --graph_optimizer=false each round")
    parser.add_argument("--torch_python", action="append",
                        help="a Python with PyTorch (repeat for several; default: this one)")
    parser.add_argument("--inference", action="store_true",
                        help="time the exported CIFAR-10 model's inference instead of training")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir:
        write_cifar10(data_dir)
        if args.inference:
            inference(data_dir, args.rounds, args.threads)
            return
        pythons = args.torch_python or [sys.executable]
        versions = [torch_version(p) for p in pythons]
        print(f"{'model':<10} {'towerflow s/step':>17} {'towerflow MB':>13}" +
              "".join(f" {'torch ' + v + ' s/step':>21} {'ratio':>6} {'MB':>5}" for v in versions) +
              (f" {'as written s/step':>18}" if args.unoptimized else ""))
        for model in args.models.split(","):
            tw, plain, tw_rss = [], [], []
            pt = [[] for _ in pythons]
            pt_rss = [[] for _ in pythons]
            for _ in range(args.rounds):
                seconds, rss = towerflow_step(model, data_dir, args.steps, args.warmup, 10)
                tw.append(seconds)
                tw_rss.append(rss)
                if args.unoptimized:
                    seconds, _ = towerflow_step(model, data_dir, args.steps, args.warmup, 10,
                                                ["--graph_optimizer=false"])
                    plain.append(seconds)
                for i, python in enumerate(pythons):
                    seconds, rss = torch_step(model, args.threads, args.torch_steps, python=python)
                    pt[i].append(seconds)
                    pt_rss[i].append(rss)
            t = statistics.median(tw)
            columns = ""
            for times, rss in zip(pt, pt_rss):
                p = statistics.median(times)
                columns += f" {p:>21.3f} {p / t:>5.2f}x {max(rss):>5.0f}"
            print(f"{model:<10} {t:>17.3f} {max(tw_rss):>13.0f}" + columns +
                  (f" {statistics.median(plain):>18.3f}" if plain else ""), flush=True)
            print(f"{'':<10} runs: towerflow {' '.join('%.3f' % v for v in tw)}" +
                  "".join(f"; torch {v} {' '.join('%.3f' % x for x in times)}"
                          for v, times in zip(versions, pt)) +
                  (f"; as written {' '.join('%.3f' % v for v in plain)}" if plain else ""),
                  flush=True)


if __name__ == "__main__":
    main()
