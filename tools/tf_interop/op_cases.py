"""Every registered op of Towerflow against TensorFlow's kernels.

Run by check.py (the per-op check of tools/tf_interop/run.sh):

  python3 tools/tf_interop/op_cases.py --driver=bazel-bin/tools/tf_interop/tf_interop_driver \
      --work=/tmp/op_cases [--ops=Add,MatMul] [--verbose]

Each case is a GraphDef of one node, "op", fed by constants: Towerflow runs it
(tf_interop_driver cases, graph optimizer off) and TensorFlow runs the same
GraphDef (tf.compat.v1.Session, Grappler and constant folding off). Both sides
run their own kernel of the op on the same NodeDef, as tf.raw_ops would; the
outputs' dtypes and shapes must be equal and their values equal (integers,
booleans) or close (floats: NaN where NaN, infinities where infinities), and
an error on one side must be an error of the same class on the other.

The cases come from Towerflow's OpDefs: for each op TensorFlow also has, each
dtype of its main type attribute among float, double, int32, int64 and bool,
inputs of the same shape, scalars, a broadcast, shapes that do not match (a
bad input), and the edge values (NaN, infinities, -0, the integer extremes);
inputs named like axes get a valid axis. CASES holds the ops whose attributes
or inputs need to be chosen by hand. Stateful ops (variables, queues, I/O;
CheckNumerics and the seeded random ops are compared), ops on functions,
resources or lists of types, and ops whose required attributes no case gives
are listed as not compared, with why.

A difference listed in KNOWN_DIFFERENCES (with TensorFlow's behaviour and
the reason) is reported but does not fail; any other fails the check, as
does a listed one that no longer happens. CPU_DEPENDENT lists the cases
whose TF answer depends on the machine's CPU: they may differ or agree. The log has a line per op and one
summary: "N ops, M cases: A agree, D differ, T TF-only, W Towerflow-only".
"""
import argparse
import collections
import json
import os
import subprocess
import sys

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2, graph_pb2, op_def_pb2, summary_pb2, types_pb2
from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2
from tensorflow.python.framework import op_def_registry

tf1 = tf.compat.v1

DTYPES = [types_pb2.DT_FLOAT, types_pb2.DT_DOUBLE, types_pb2.DT_INT32, types_pb2.DT_INT64,
          types_pb2.DT_BOOL, types_pb2.DT_HALF, types_pb2.DT_BFLOAT16]
NUMPY = {types_pb2.DT_FLOAT: np.float32, types_pb2.DT_DOUBLE: np.float64,
         types_pb2.DT_INT32: np.int32, types_pb2.DT_INT64: np.int64, types_pb2.DT_BOOL: np.bool_,
         types_pb2.DT_UINT8: np.uint8, types_pb2.DT_INT8: np.int8, types_pb2.DT_HALF: np.float16, types_pb2.DT_BFLOAT16: tf.bfloat16.as_numpy_dtype,
         types_pb2.DT_INT16: np.int16, types_pb2.DT_UINT16: np.uint16,
         types_pb2.DT_UINT32: np.uint32, types_pb2.DT_UINT64: np.uint64,
         types_pb2.DT_STRING: np.object_, types_pb2.DT_COMPLEX64: np.complex64,
         types_pb2.DT_COMPLEX128: np.complex128,
         **{t: tf.dtypes.as_dtype(t).as_numpy_dtype for t in (
             types_pb2.DT_QINT8, types_pb2.DT_QUINT8, types_pb2.DT_QINT16, types_pb2.DT_QUINT16,
             types_pb2.DT_QINT32)}}
NAME = {v: tf.dtypes.as_dtype(v).name for v in NUMPY}

# Values of each kind of input: six of them, reshaped to the case's shape.
PATTERNS = {
    "float": [[0.5, -1.5, 2.25, 0.0, 3.0, -0.75], [1.25, 2.0, -0.5, 4.0, -3.0, 0.25]],
    "int": [[3, -2, 7, 0, 1, -5], [2, 3, -1, 4, -3, 1]],
    "bool": [[True, False, True, True, False, False], [False, False, True, True, True, False]],
    "string": [[b"loss", b"a/b", b"", b"tower_1", b"x", b"\xc3\xa9"],
               [b"-", b"b", b"c/d", b"", b"yz", b"0"]],
    "complex": [[1.5 + 2j, -0.5 + 0.25j, 3 - 1j, -2 - 3j, 0.75 + 0j, -1.5j],
                [0.5 - 1j, 2 + 0.5j, -1 + 1j, 1.25 + 0j, -0.5 - 2j, 3 + 3j]],
}
EDGES = {
    "float": [[np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30], [1.0, np.nan, np.inf, 0.0, -0.0, -1e30]],
    "int": [[np.iinfo(np.int32).min, np.iinfo(np.int32).max, 0, -1, 1, 7],
            [-1, 1, 0, 0, np.iinfo(np.int32).min, 2]],
}
# Inputs that are axes get 1 (the second of two dimensions) of their type.
AXIS_NAMES = {"axis", "reduction_indices", "dim", "split_dim", "concat_dim", "dimension"}
# Stateful ops one node shows: checks, and random ops with both seeds set
# (the first draw of the stream).
STATEFUL_COMPARED = {"CheckNumerics", "CheckNumericsV2", "Assert", "GuaranteeConst", "RandomUniform", "RandomStandardNormal",
                     "Multinomial",
                     "TruncatedNormal", "RandomUniformInt", "RandomShuffle",
                     "RandomGamma", "RandomPoisson", "RandomPoissonV2",
                     "SampleDistortedBoundingBox", "SampleDistortedBoundingBoxV2",
                     "UniformCandidateSampler", "LogUniformCandidateSampler",
                     "LearnedUnigramCandidateSampler", "ThreadUnsafeUnigramCandidateSampler",
                     "FixedUnigramCandidateSampler", "AllCandidateSampler"}
# Ops that only run inside a loop frame or on a fed value.
FRAME_OPS = {"Enter", "Exit", "NextIteration", "RefEnter", "RefExit", "RefNextIteration",
             "LoopCond", "ControlTrigger", "Placeholder", "PlaceholderV2", "Switch", "RefSwitch",
             "Merge", "RefMerge"}

# Ops with a required attribute, or inputs no pattern fits: their cases by
# hand. Each: (variant, {input: (dtype, shape, values) or value list}, {attr: value}).
SIXTEEN = (types_pb2.DT_HALF, types_pb2.DT_BFLOAT16)
F, D, I32, I64, B = (types_pb2.DT_FLOAT, types_pb2.DT_DOUBLE, types_pb2.DT_INT32,
                     types_pb2.DT_INT64, types_pb2.DT_BOOL)
# LRNGrad's input_image and output_image = LRN(input_image) with LRN's
# defaults (depth_radius 5, bias 1, alpha 1, beta 0.5).
LRN_IN = (F, [1, 2, 2, 6], (np.arange(24, dtype=np.float32).reshape(1, 2, 2, 6) - 11) / 8)
_squares = np.stack([np.sum(LRN_IN[2][..., max(0, d - 5):d + 6] ** 2, axis=-1)
                     for d in range(6)], axis=-1)
LRN_OUT = (LRN_IN[2] / np.sqrt(1 + _squares)).astype(np.float32)
STR = types_pb2.DT_STRING
C64, C128 = types_pb2.DT_COMPLEX64, types_pb2.DT_COMPLEX128
SUMMARY_LOSS = summary_pb2.Summary(value=[summary_pb2.Summary.Value(
    tag="loss", simple_value=2.5)]).SerializeToString()
SUMMARY_LR = summary_pb2.Summary(value=[summary_pb2.Summary.Value(
    tag="learning_rate", simple_value=0.1)]).SerializeToString()
IMAGE = (F, [1, 4, 4, 2], np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2) / 7 - 2)
# MaxPool 2x2 / 2 of IMAGE: MaxPoolGrad's orig_output.
MAXPOOL_2X2 = IMAGE[2].reshape(1, 2, 2, 2, 2, 2).max(axis=(2, 4))
# A volume for the 3-D ops, and its MaxPool3D 2x2x2 / 2 (MaxPool3DGrad's
# orig_output).
VOLUME = (F, [1, 2, 4, 4, 2], np.arange(64, dtype=np.float32).reshape(1, 2, 4, 4, 2) / 7 - 4)
MAXPOOL3D_2X2X2 = VOLUME[2].reshape(1, 1, 2, 2, 2, 2, 2, 2).max(axis=(2, 4, 6))
S5, S5_2 = [1, 1, 1, 1, 1], [1, 2, 2, 2, 1]
# Matrices for the linear algebra: x + 3 I, and x x^T + I.
_X = (np.arange(18, dtype=np.float64).reshape(2, 3, 3) % 7 - 3) / 4
WELL_CONDITIONED = (D, [2, 3, 3], _X + 3 * np.eye(3))
POSITIVE_DEFINITE = (D, [2, 3, 3], _X @ np.swapaxes(_X, 1, 2) + np.eye(3))
# RGB pixels [2, 4, 3]: saturated and grey ones, black, pure green.
RGB = (F, [2, 4, 3], [0.2, 0.5, 0.9, 0.9, 0.1, 0.4, 0.3, 0.3, 0.3, 0, 0, 0, 1, 0.6, 0.2, 0.25, 0.75,
                      0.5, 0.6, 0.2, 0.8, 0, 1, 0])
# Boxes for non-maximum suppression: three overlapping near 0, two near 10,
# one alone.
NMS_BOXES = (F, [6, 4], [0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1,
                         11.1, 0, 100, 1, 101])
NMS_SCORES = (F, [6], [0.9, 0.75, 0.6, 0.95, 0.5, 0.3])
# CropAndResize: boxes inside, partly outside and flipped.
CROP_IMAGE = (F, [2, 4, 5, 2], (np.arange(80) / 7).astype(np.float32))
CROP_BOXES = (F, [3, 4], [0.1, 0.2, 0.8, 0.9, 0.5, -0.2, 1.3, 0.6, 0.9, 0.8, 0.1, 0.05])
CROP_IND = (I32, [3], [1, 0, 1])
CROP_GRADS = (F, [3, 3, 2, 2], (np.arange(36) / 10 - 1).astype(np.float32))
# MaxPoolWithArgmax: ties and repeated maxima.
ARGMAX_IN = (F, [2, 3, 4, 2], [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6,
                               4, 3, 3, 8, 3, 2, 7, 9, 5, 0, 2, 8, 8, 4, 1, 9, 7, 1, 6, 9, 3, 9, 9,
                               3, 7])
# Boxes to draw: inside, across two edges, inverted, outside.
DRAW_BOXES = (F, [1, 4, 4], [0.2, 0.1, 0.8, 0.7, -0.5, 0.5, 0.5, 1.5, 0.9, 0.9, 0.1, 0.1, 2, 2, 3, 3])
# An LSTM step: states [2, 2], weights [5, 8] for input 3.
LSTM_IN_STATE = {"cs_prev": (F, [2, 2], [0.5, -0.3, 0.2, 0.9]),
                 "h_prev": (F, [2, 2], [0.1, -0.2, 0.3, 0.05]),
                 "w": (F, [5, 8], (np.arange(40) % 9 / 10 - 0.4).astype(np.float32)),
                 "wci": (F, [2], [0.1, -0.2]), "wcf": (F, [2], [0.3, 0.05]),
                 "wco": (F, [2], [-0.15, 0.25]), "b": (F, [8], [0.1, 0, -0.1, 0.2, 0, 0.05, 0, -0.05])}
LSTM_IN = {"x": (F, [2, 3], None), **LSTM_IN_STATE}
# The activations and incoming gradients the gradient ops read (any values:
# the backward is elementwise in them), one step and three.
_ACTS = [0.3, 0.7, -0.4, 0.55, 0.9, -0.2, 0.15, 0.6, -0.75, 0.45, 0.05, -0.35]
LSTM_GRAD_IN = {name: (F, [2, 2], _ACTS[k:] + _ACTS[:k]) for k, name in
                enumerate(["i", "cs", "f", "o", "ci", "co", "cs_grad", "h_grad"])}
BLOCK_GRAD_IN = {name: (F, [3, 2, 2], _ACTS[k:] + _ACTS[:k]) for k, name in
                 enumerate(["i", "cs", "f", "o", "ci", "co", "h", "cs_grad", "h_grad"])}
GRU_IN = {"x": (F, [2, 3], None), "h_prev": (F, [2, 2], [0.1, -0.2, 0.3, 0.05]),
          "w_ru": (F, [5, 4], (np.arange(20) % 7 / 10 - 0.3).astype(np.float32)),
          "w_c": (F, [5, 2], (np.arange(10) % 5 / 10 - 0.2).astype(np.float32)),
          "b_ru": (F, [4], [0.1, 0, -0.1, 0.2]), "b_c": (F, [2], [0.05, -0.05])}
# An image [1, 5, 5, 2] and filter [2, 2, 2] for Dilation2D.
DIL_IN = (F, [1, 5, 5, 2], np.random.RandomState(0).randn(1, 5, 5, 2).astype(np.float32))
DIL_FILTER = (F, [2, 2, 2], np.random.RandomState(1).randn(2, 2, 2).astype(np.float32))
# Time-major logits [5, 2, 4] and labels [[1, 1], [2, 0]] for CTC.
CTC_LOGITS = (F, [5, 2, 4], np.random.RandomState(0).randn(5, 2, 4).astype(np.float32))
CTC_INDICES = (I64, [4, 2], [0, 0, 0, 1, 1, 0, 1, 1])
# Inputs for fake quantisation, across and beyond its ranges.
QUANT_IN = (F, [4, 8], np.linspace(-9.7, 8.3, 32).astype(np.float32).reshape(4, 8))
# The eight-bit inference ops' inputs: a quint8 image [1, 6, 6, 2], a filter
# [2, 2, 2, 3], and qint32 values across the type.
QU8 = types_pb2.DT_QUINT8
Q_IMAGE = [(37 * i + 11) % 256 for i in range(72)]
Q_FILTER = [(91 * i + 5) % 256 for i in range(24)]
Q_WIDE = (types_pb2.DT_QINT32, [7], [-2147483648, -19660800, -100000, 0, 5, 123456789, 2147483647])
TALL = (D, [4, 3], [2, -1, 0.5, 1, 3, -2, 0, 1, 4, 1, -1, 1])
# Rows for the segment reductions, a zero among them.
SEGMENT_DATA = (F, [5, 3], [1, -2, 3, 4, 5, -6, 0, 8, 9, -1, 0, 2, 7, -3, 5])
# An image TF encodes here as JPEG and PNG: both sides decode the same bytes.
U8 = types_pb2.DT_UINT8
U64 = types_pb2.DT_UINT64
_PIXELS = ((np.arange(6 * 8 * 3).reshape(6, 8, 3) * 37) % 256).astype(np.uint8)
_JPEG = tf.io.encode_jpeg(_PIXELS).numpy()
_PNG = tf.io.encode_png(_PIXELS).numpy()
_WAV = tf.audio.encode_wav(np.array([[0.5, -0.25], [1.0, -1.2], [1e-5, 0]], np.float32), 16000).numpy()

# SparseTensors for the sparse ops: a sorted [4, 5] one, one out of order,
# and a second operand sharing some of the first's indices.
SP_A = {"indices": (I64, [7, 2], [0, 0, 0, 3, 1, 1, 1, 4, 2, 2, 3, 0, 3, 4]),
        "values": (F, [7], [1, 2, -3, 4, 5, 6, -7]), "shape": (I64, [2], [4, 5])}
SP_UNSORTED = {"indices": (I64, [4, 2], [2, 2, 0, 3, 0, 0, 3, 1]),
               "values": (F, [4], [1, 2, 3, 4]), "shape": (I64, [2], [4, 5])}
SP_B = {"indices": (I64, [4, 2], [0, 3, 1, 2, 2, 2, 3, 4]),
        "values": (F, [4], [10, -20, -5.05, 7]), "shape": (I64, [2], [4, 5])}


# Feature-cross columns: strings (row 0: a, b; row 1: c) and int64s (row 0:
# 7; row 1: 8, -9), dense [[x], [y]] and [[3, 4], [5, 6]].
CROSS_IN = {"indices": [(I64, [3, 2], [0, 0, 0, 1, 1, 0]), (I64, [3, 2], [0, 0, 1, 0, 1, 1])],
            "values": [(STR, [3], [b"a", b"b", b"c"]), (I64, [3], [7, 8, -9])],
            "shapes": [(I64, [2], [2, 2]), (I64, [2], [2, 2])],
            "dense_inputs": [(STR, [2, 1], [b"x", b"y"]), (I64, [2, 2], [3, 4, 5, 6])]}
CROSS_TYPES = {STR: "string", I64: "int64"}
CROSS_EXTRA = {"SparseCrossV2": {"sep": (STR, [], [b"--"])},
               "SparseCrossHashed": {"num_buckets": (I64, [], [1000]),
                                     "strong_hash": (B, [], [False]),
                                     "salt": (I64, [2], [137, 173])}}


def _sparse(prefix, sp, dtype=None, names=("indices", "values", "shape")):
    """A SparseTensor's three inputs under an op's names (values as dtype)."""
    values = sp["values"] if dtype is None else (dtype,) + sp["values"][1:]
    return {f"{prefix}{names[0]}": sp["indices"], f"{prefix}{names[1]}": values,
            f"{prefix}{names[2]}": sp["shape"]}


def _bytes(data):
    return (STR, [], [data])


CASES = {
    "MatMul": [
        ("2x3.3x2", {"a": (F, [2, 3], None), "b": (F, [3, 2], None)}, {}),
        ("transposed", {"a": (F, [3, 2], None), "b": (F, [3, 2], None)}, {"transpose_a": True}),
        ("inner mismatch", {"a": (F, [2, 3], None), "b": (F, [2, 3], None)}, {}),
        ("double", {"a": (D, [2, 3], None), "b": (D, [3, 2], None)}, {}),
    ],
    "Conv2D": [
        ("same", {"input": IMAGE, "filter": (F, [3, 3, 2, 3], None)},
         {"strides": [1, 1, 1, 1], "padding": "SAME"}),
        ("valid stride 2", {"input": IMAGE, "filter": (F, [2, 2, 2, 1], None)},
         {"strides": [1, 2, 2, 1], "padding": "VALID"}),
        ("channels mismatch", {"input": IMAGE, "filter": (F, [3, 3, 3, 1], None)},
         {"strides": [1, 1, 1, 1], "padding": "SAME"}),
        ("bad strides", {"input": IMAGE, "filter": (F, [3, 3, 2, 1], None)},
         {"strides": [1, 1, 1], "padding": "SAME"}),
    ],
    "MaxPool": [
        ("same", {"input": IMAGE}, {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1],
                                    "padding": "SAME"}),
        ("valid 3x3", {"input": IMAGE}, {"ksize": [1, 3, 3, 1], "strides": [1, 1, 1, 1],
                                         "padding": "VALID"}),
        ("window too big", {"input": IMAGE}, {"ksize": [1, 5, 5, 1], "strides": [1, 1, 1, 1],
                                              "padding": "VALID"}),
    ],
    "MaxPoolV2": [
        ("same", {"input": IMAGE, "ksize": (I32, [4], [1, 2, 2, 1]), "strides": (I32, [4], [1, 2, 2, 1])},
         {"padding": "SAME"}),
        ("valid 3x3", {"input": IMAGE, "ksize": (I32, [4], [1, 3, 3, 1]),
                       "strides": (I32, [4], [1, 1, 1, 1])}, {"padding": "VALID"}),
        ("batch window", {"input": IMAGE, "ksize": (I32, [4], [2, 1, 1, 1]),
                          "strides": (I32, [4], [1, 1, 1, 1])}, {"padding": "VALID"}),
    ],
    "MaxPoolGradV2": [
        ("valid 2x2", {"orig_input": (F, [1, 3, 3, 1], [1, 5, 2, 4, 3, 6, 0, 8, 7]),
                       "orig_output": (F, [1, 2, 2, 1], [5, 6, 8, 8]),
                       "grad": (F, [1, 2, 2, 1], [1, 2, 3, 4]),
                       "ksize": (I32, [4], [1, 2, 2, 1]), "strides": (I32, [4], [1, 1, 1, 1])},
         {"padding": "VALID"}),
    ],
    "MaxPoolGradGradV2": [
        ("valid 2x2", {"orig_input": (F, [1, 3, 3, 1], [1, 5, 2, 4, 3, 6, 0, 8, 7]),
                       "orig_output": (F, [1, 2, 2, 1], [5, 6, 8, 8]),
                       "grad": (F, [1, 3, 3, 1], [1, 2, 3, 4, 5, 6, 7, 8, 9]),
                       "ksize": (I32, [4], [1, 2, 2, 1]), "strides": (I32, [4], [1, 1, 1, 1])},
         {"padding": "VALID"}),
    ],
    "AvgPool": [
        ("same", {"value": IMAGE}, {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1],
                                    "padding": "SAME"}),
        ("valid 3x3", {"value": IMAGE}, {"ksize": [1, 3, 3, 1], "strides": [1, 1, 1, 1],
                                         "padding": "VALID"}),
    ],
    "Conv3D": [
        ("same", {"input": VOLUME, "filter": (F, [2, 3, 3, 2, 3], None)},
         {"strides": S5, "padding": "SAME"}),
        ("valid stride 2", {"input": VOLUME, "filter": (F, [2, 2, 2, 2, 1], None)},
         {"strides": S5_2, "padding": "VALID"}),
        ("dilated", {"input": VOLUME, "filter": (F, [1, 2, 2, 2, 2], None)},
         {"strides": S5, "padding": "SAME", "dilations": [1, 1, 2, 2, 1]}),
        ("NCDHW", {"input": (F, [1, 2, 2, 4, 4], None), "filter": (F, [2, 2, 2, 2, 3], None)},
         {"strides": [1, 1, 1, 2, 1], "padding": "SAME", "data_format": "NCDHW"}),
        ("double", {"input": (D, [1, 2, 3, 3, 2], None), "filter": (D, [2, 2, 2, 2, 2], None)},
         {"strides": S5, "padding": "VALID"}),
        ("channels mismatch", {"input": VOLUME, "filter": (F, [2, 2, 2, 3, 1], None)},
         {"strides": S5, "padding": "SAME"}),
    ],
    "Conv3DBackpropInputV2": [
        ("same", {"input_sizes": (I32, [5], [1, 2, 4, 4, 2]), "filter": (F, [2, 3, 3, 2, 3], None),
                  "out_backprop": (F, [1, 2, 4, 4, 3], None)},
         {"strides": S5, "padding": "SAME"}),
        ("valid stride 2", {"input_sizes": (I32, [5], [1, 2, 4, 4, 2]),
                            "filter": (F, [2, 2, 2, 2, 3], None),
                            "out_backprop": (F, [1, 1, 2, 2, 3], None)},
         {"strides": S5_2, "padding": "VALID"}),
    ],
    "Conv3DBackpropFilterV2": [
        ("same", {"input": VOLUME, "filter_sizes": (I32, [5], [2, 3, 3, 2, 3]),
                  "out_backprop": (F, [1, 2, 4, 4, 3], None)},
         {"strides": S5, "padding": "SAME"}),
        ("valid stride 2", {"input": VOLUME, "filter_sizes": (I32, [5], [2, 2, 2, 2, 3]),
                            "out_backprop": (F, [1, 1, 2, 2, 3], None)},
         {"strides": S5_2, "padding": "VALID"}),
    ],
    "Conv3DBackpropInput": [
        ("valid stride 2", {"input": VOLUME, "filter": (F, [2, 2, 2, 2, 3], None),
                            "out_backprop": (F, [1, 1, 2, 2, 3], None)},
         {"strides": S5_2, "padding": "VALID"}),
    ],
    "Conv3DBackpropFilter": [
        ("valid stride 2", {"input": VOLUME, "filter": (F, [2, 2, 2, 2, 3], None),
                            "out_backprop": (F, [1, 1, 2, 2, 3], None)},
         {"strides": S5_2, "padding": "VALID"}),
    ],
    "MaxPool3D": [
        ("same", {"input": VOLUME}, {"ksize": S5_2, "strides": S5_2, "padding": "SAME"}),
        ("valid 2x3x3", {"input": VOLUME}, {"ksize": [1, 2, 3, 3, 1], "strides": S5,
                                            "padding": "VALID"}),
    ],
    "AvgPool3D": [
        ("same", {"input": VOLUME}, {"ksize": [1, 2, 3, 3, 1], "strides": [1, 1, 2, 1, 1],
                                     "padding": "SAME"}),
        ("valid", {"input": VOLUME}, {"ksize": S5_2, "strides": S5_2, "padding": "VALID"}),
    ],
    "MaxPool3DGrad": [
        ("2x2x2 valid", {"orig_input": VOLUME,
                         "orig_output": (F, [1, 1, 2, 2, 2], MAXPOOL3D_2X2X2),
                         "grad": (F, [1, 1, 2, 2, 2], None)},
         {"ksize": S5_2, "strides": S5_2, "padding": "VALID"}),
    ],
    "MaxPool3DGradGrad": [
        ("2x2x2 valid", {"orig_input": VOLUME,
                         "orig_output": (F, [1, 1, 2, 2, 2], MAXPOOL3D_2X2X2),
                         "grad": (F, [1, 2, 4, 4, 2], None)},
         {"ksize": S5_2, "strides": S5_2, "padding": "VALID"}),
    ],
    "AvgPool3DGrad": [
        ("2x3x3 same", {"orig_input_shape": (I32, [5], [1, 2, 4, 4, 2]),
                        "grad": (F, [1, 2, 2, 4, 2], None)},
         {"ksize": [1, 2, 3, 3, 1], "strides": [1, 1, 2, 1, 1], "padding": "SAME"}),
    ],
    "SegmentSum": [
        ("sorted with a gap", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [0, 0, 2, 2, 3])}, {}),
        ("int64 ids", {"data": (D, [4], None), "segment_ids": (I64, [4], [0, 1, 1, 1])}, {}),
        ("not increasing", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [0, 2, 1, 2, 3])}, {}),
    ],
    "SegmentMean": [
        ("sorted with a gap", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [0, 0, 2, 2, 3])}, {}),
        ("int64 ids", {"data": (D, [4], None), "segment_ids": (I64, [4], [0, 1, 1, 1])}, {}),
        ("not increasing", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [0, 2, 1, 2, 3])}, {}),
    ],
    "SegmentProd": [
        ("sorted with a gap", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [0, 0, 2, 2, 3])}, {}),
        ("int64 ids", {"data": (D, [4], None), "segment_ids": (I64, [4], [0, 1, 1, 1])}, {}),
        ("not increasing", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [0, 2, 1, 2, 3])}, {}),
    ],
    "SegmentMax": [
        ("sorted with a gap", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [0, 0, 2, 2, 3])}, {}),
        ("int64 ids", {"data": (D, [4], None), "segment_ids": (I64, [4], [0, 1, 1, 1])}, {}),
        ("not increasing", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [0, 2, 1, 2, 3])}, {}),
    ],
    "SegmentMin": [
        ("sorted with a gap", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [0, 0, 2, 2, 3])}, {}),
        ("int64 ids", {"data": (D, [4], None), "segment_ids": (I64, [4], [0, 1, 1, 1])}, {}),
        ("not increasing", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [0, 2, 1, 2, 3])}, {}),
    ],
    "UnsortedSegmentSum": [
        ("dropped and empty", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [2, 0, -1, 2, 0]),
                               "num_segments": (I32, [], 4)}, {}),
        ("int32 data", {"data": (I32, [5], None), "segment_ids": (I32, [5], [1, 0, 1, 1, 0]),
                        "num_segments": (I32, [], 2)}, {}),
        ("out of range", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [0, 5, 1, 1, 2]),
                          "num_segments": (I32, [], 4)}, {}),
    ],
    "UnsortedSegmentProd": [
        ("dropped and empty", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [2, 0, -1, 2, 0]),
                               "num_segments": (I32, [], 4)}, {}),
        ("int32 data", {"data": (I32, [5], None), "segment_ids": (I32, [5], [1, 0, 1, 1, 0]),
                        "num_segments": (I32, [], 2)}, {}),
        ("out of range", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [0, 5, 1, 1, 2]),
                          "num_segments": (I32, [], 4)}, {}),
    ],
    "UnsortedSegmentMax": [
        ("dropped and empty", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [2, 0, -1, 2, 0]),
                               "num_segments": (I32, [], 4)}, {}),
        ("int32 data", {"data": (I32, [5], None), "segment_ids": (I32, [5], [1, 0, 1, 1, 0]),
                        "num_segments": (I32, [], 2)}, {}),
        ("out of range", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [0, 5, 1, 1, 2]),
                          "num_segments": (I32, [], 4)}, {}),
    ],
    "UnsortedSegmentMin": [
        ("dropped and empty", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [2, 0, -1, 2, 0]),
                               "num_segments": (I32, [], 4)}, {}),
        ("int32 data", {"data": (I32, [5], None), "segment_ids": (I32, [5], [1, 0, 1, 1, 0]),
                        "num_segments": (I32, [], 2)}, {}),
        ("out of range", {"data": SEGMENT_DATA, "segment_ids": (I32, [5], [0, 5, 1, 1, 2]),
                          "num_segments": (I32, [], 4)}, {}),
    ],
    "MatrixInverse": [
        ("3x3", {"input": WELL_CONDITIONED}, {}),
        ("adjoint", {"input": WELL_CONDITIONED}, {"adjoint": True}),
        ("float", {"input": (F, [2, 3, 3], WELL_CONDITIONED[2])}, {}),
        ("not square", {"input": (D, [2, 3], None)}, {}),
    ],
    "MatrixDeterminant": [("3x3", {"input": WELL_CONDITIONED}, {})],
    "LogMatrixDeterminant": [("3x3", {"input": WELL_CONDITIONED}, {})],
    "MatrixSolve": [
        ("3x3", {"matrix": WELL_CONDITIONED, "rhs": (D, [2, 3, 2], None)}, {}),
        ("adjoint", {"matrix": WELL_CONDITIONED, "rhs": (D, [2, 3, 2], None)}, {"adjoint": True}),
        ("rhs mismatch", {"matrix": WELL_CONDITIONED, "rhs": (D, [2, 2, 2], None)}, {}),
    ],
    "MatrixTriangularSolve": [
        ("lower", {"matrix": WELL_CONDITIONED, "rhs": (D, [2, 3, 2], None)}, {}),
        ("upper adjoint", {"matrix": WELL_CONDITIONED, "rhs": (D, [2, 3, 2], None)},
         {"lower": False, "adjoint": True}),
    ],
    "Cholesky": [("positive definite", {"input": POSITIVE_DEFINITE}, {})],
    "MatrixSquareRoot": [("positive definite", {"input": POSITIVE_DEFINITE}, {}),
                         ("well conditioned", {"input": WELL_CONDITIONED}, {}),
                         ("not square", {"input": (D, [2, 3], None)}, {})],
    "MatrixDiagV3": [
        ("band -1..1", {"diagonal": (F, [2, 3, 3], None), "k": (I32, [2], [-1, 1]),
                        "num_rows": (I32, [], -1), "num_cols": (I32, [], -1),
                        "padding_value": (F, [], 9)}, {}),
        ("k 1, 4 rows", {"diagonal": (F, [2, 3], None), "k": (I32, [], 1),
                         "num_rows": (I32, [], 4), "num_cols": (I32, [], -1),
                         "padding_value": (F, [], 0)}, {}),
        ("LEFT_RIGHT", {"diagonal": (F, [2, 3, 3], None), "k": (I32, [2], [-1, 1]),
                        "num_rows": (I32, [], -1), "num_cols": (I32, [], -1),
                        "padding_value": (F, [], 9)}, {"align": "LEFT_RIGHT"}),
        ("rows too few", {"diagonal": (F, [2, 3], None), "k": (I32, [], 0),
                          "num_rows": (I32, [], 2), "num_cols": (I32, [], -1),
                          "padding_value": (F, [], 0)}, {}),
    ],
    "MatrixDiagV2": [
        ("band -1..1", {"diagonal": (F, [2, 3, 3], None), "k": (I32, [2], [-1, 1]),
                        "num_rows": (I32, [], -1), "num_cols": (I32, [], 5),
                        "padding_value": (F, [], 9)}, {}),
    ],
    "MatrixDiagPartV3": [
        (f"{align} -1..2", {"input": (F, [2, 3, 4], None), "k": (I32, [2], [-1, 2]),
                            "padding_value": (F, [], 7)}, {"align": align})
        for align in ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")
    ] + [("k out of range", {"input": (F, [2, 3, 4], None), "k": (I32, [], 5),
                             "padding_value": (F, [], 0)}, {})],
    "MatrixDiagPartV2": [
        ("-1..2", {"input": (F, [2, 3, 4], None), "k": (I32, [2], [-1, 2]),
                   "padding_value": (F, [], 7)}, {}),
    ],
    "MatrixSetDiagV3": [
        ("0..1", {"input": (F, [2, 3, 4], None), "diagonal": (F, [2, 2, 3], None),
                  "k": (I32, [2], [0, 1])}, {}),
        ("wrong diagonal", {"input": (F, [2, 3, 4], None), "diagonal": (F, [2, 4], None),
                            "k": (I32, [], 0)}, {}),
    ],
    "MatrixSetDiagV2": [
        ("-1..0", {"input": (F, [2, 4, 3], None), "diagonal": (F, [2, 2, 3], None),
                   "k": (I32, [2], [-1, 0])}, {}),
    ],
    "MatrixSetDiag": [
        ("3x4", {"input": (F, [2, 3, 4], None), "diagonal": (F, [2, 3], None)}, {}),
        ("int32 4x3", {"input": (I32, [4, 3], None), "diagonal": (I32, [3], None)}, {}),
    ],
    "MatrixBandPart": [
        ("lower 1", {"input": (F, [2, 3, 4], None), "num_lower": (I64, [], 1),
                     "num_upper": (I64, [], 0)}, {}),
        ("upper 1 int32", {"input": (I32, [3, 4], None), "num_lower": (I32, [], -1),
                           "num_upper": (I32, [], 1)}, {}),
        ("lower too big", {"input": (F, [2, 3, 4], None), "num_lower": (I64, [], 5),
                           "num_upper": (I64, [], 0)}, {}),
    ],
    "DiagPart": [
        ("2x3x2x3", {"input": (F, [2, 3, 2, 3], None)}, {}),
        ("mismatched", {"input": (F, [2, 3], None)}, {}),
    ],
    "Bitcast": [
        ("float32 to int32", {"input": (F, [2, 3], None)}, {"type": I32}),
        ("float32 to uint8", {"input": (F, [3], None)}, {"type": U8}),
        ("float64 to int32", {"input": (D, [2], None)}, {"type": I32}),
        ("int32 pairs to int64", {"input": (I32, [3, 2], None)}, {"type": I64}),
        ("int32 to int64, no pairs", {"input": (I32, [3], None)}, {"type": I64}),
    ],
    "Reshape": [
        ("2x3 to 3x2", {"tensor": (F, [2, 3], None), "shape": (I32, [2], [3, 2])}, {}),
        ("inferred", {"tensor": (F, [2, 3], None), "shape": (I32, [2], [-1, 2])}, {}),
        ("inferred beside a zero", {"tensor": (F, [1, 2, 0], None),
                                    "shape": (I32, [3], [2, 0, -1])}, {}),
        ("wrong size", {"tensor": (F, [2, 3], None), "shape": (I32, [2], [4, 2])}, {}),
        ("two unknowns", {"tensor": (F, [2, 3], None), "shape": (I32, [2], [-1, -1])}, {}),
    ],
    "Transpose": [
        ("perm 1 0", {"x": (F, [2, 3], None), "perm": (I32, [2], [1, 0])}, {}),
        ("bad perm", {"x": (F, [2, 3], None), "perm": (I32, [2], [0, 0])}, {}),
    ],
    "Tile": [
        ("2x1", {"input": (F, [2, 3], None), "multiples": (I32, [2], [2, 1])}, {}),
        ("negative", {"input": (F, [2, 3], None), "multiples": (I32, [2], [-1, 1])}, {}),
    ],
    "Pad": [
        ("1 each side", {"input": (F, [2, 3], None),
                         "paddings": (I32, [2, 2], [1, 1, 0, 2])}, {}),
        ("negative", {"input": (F, [2, 3], None), "paddings": (I32, [2, 2], [-1, 0, 0, 0])}, {}),
    ],
    "Slice": [
        ("middle", {"input": (F, [2, 3], None), "begin": (I32, [2], [0, 1]),
                    "size": (I32, [2], [2, -1])}, {}),
        ("out of range", {"input": (F, [2, 3], None), "begin": (I32, [2], [0, 2]),
                          "size": (I32, [2], [1, 3])}, {}),
    ],
    "GatherV2": [
        ("axis 0", {"params": (F, [2, 3], None), "indices": (I32, [3], [1, 0, 1]),
                    "axis": (I32, [], 0)}, {}),
        ("axis 1", {"params": (F, [2, 3], None), "indices": (I64, [2], [2, 0]),
                    "axis": (I32, [], 1)}, {}),
        ("index out of range", {"params": (F, [2, 3], None), "indices": (I32, [1], [5]),
                                "axis": (I32, [], 0)}, {}),
    ],
    "OneHot": [
        ("depth 4", {"indices": (I32, [3], [0, 3, -1]), "depth": (I32, [], 4),
                     "on_value": (F, [], 1.0), "off_value": (F, [], 0.0)}, {}),
        ("negative depth", {"indices": (I32, [3], [0, 3, -1]), "depth": (I32, [], -1),
                            "on_value": (F, [], 1.0), "off_value": (F, [], 0.0)}, {}),
    ],
    "Cast": [
        (f"{NAME[a]} to {NAME[b]}", {"x": (a, [6], PATTERNS["float"][0])}, {"DstT": b})
        for a in (F, D, I32, I64) for b in (F, D, I32, I64, B) if a != b
    ] + [("float edges to int32", {"x": (F, [6], EDGES["float"][0])}, {"DstT": I32})] + [
        (f"{NAME[a]} to {NAME[b]}", {"x": (a, [6], None)}, {"DstT": b})
        for a, b in [(F, C64), (D, C128), (I32, C64), (B, C128), (C64, F), (C128, D), (C64, I32),
                     (C128, I64), (C64, B), (C64, C128), (C128, C64)]
    ],
    "RaggedGather": [
        ("one level", {"params_nested_splits": [(I64, [4], [0, 2, 2, 5])],
                       "params_dense_values": (F, [5], [1, 2, 3, 4, 5]),
                       "indices": (I32, [4], [2, 0, 1, 2])}, {"OUTPUT_RAGGED_RANK": 1}),
        ("two levels, 2-D indices",
         {"params_nested_splits": [(I64, [3], [0, 2, 3]), (I64, [4], [0, 1, 4, 4])],
          "params_dense_values": (F, [4, 2], None),
          "indices": (I64, [2, 2], [1, 0, 0, 0])}, {"OUTPUT_RAGGED_RANK": 3}),
        ("scalar index", {"params_nested_splits": [(I32, [4], [0, 2, 2, 5])],
                          "params_dense_values": (STR, [5], [b"a", b"bc", b"d", b"", b"e"]),
                          "indices": (I32, [], [2])}, {"OUTPUT_RAGGED_RANK": 0}),
        ("index out of range", {"params_nested_splits": [(I64, [4], [0, 2, 2, 5])],
                                "params_dense_values": (F, [5], [1, 2, 3, 4, 5]),
                                "indices": (I32, [1, 2], [1, 3])}, {"OUTPUT_RAGGED_RANK": 2}),
        ("splits unsorted", {"params_nested_splits": [(I64, [4], [0, 3, 2, 5])],
                             "params_dense_values": (F, [5], [1, 2, 3, 4, 5]),
                             "indices": (I32, [1], [1])}, {"OUTPUT_RAGGED_RANK": 1}),
    ],
    "ConcatV2": [
        ("axis 1", {"values": [(F, [2, 3], None), (F, [2, 2], PATTERNS["float"][1][:4])],
                    "axis": (I32, [], 1)}, {}),
        ("axis -1", {"values": [(F, [2, 3], None), (F, [2, 3], None)],
                     "axis": (I32, [], -1)}, {}),
        ("shapes differ", {"values": [(F, [2, 3], None), (F, [3, 3], None)],
                           "axis": (I32, [], 1)}, {}),
    ],
    "Pack": [
        ("axis 0", {"values": [(F, [3], None), (F, [3], None)]}, {"axis": 0}),
        ("axis 1", {"values": [(F, [3], None), (F, [3], None)]}, {"axis": 1}),
        ("shapes differ", {"values": [(F, [3], None), (F, [2], None)]}, {"axis": 0}),
    ],
    "AvgPoolGrad": [
        ("2x2 valid", {"orig_input_shape": (I32, [4], [1, 4, 4, 2]), "grad": (F, [1, 2, 2, 2], None)},
         {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}),
        ("3x3 same", {"orig_input_shape": (I32, [4], [1, 4, 4, 2]), "grad": (F, [1, 4, 4, 2], None)},
         {"ksize": [1, 3, 3, 1], "strides": [1, 1, 1, 1], "padding": "SAME"}),
    ],
    "MaxPoolGrad": [
        ("2x2 valid", {"orig_input": IMAGE, "orig_output": (F, [1, 2, 2, 2], MAXPOOL_2X2),
                       "grad": (F, [1, 2, 2, 2], None)},
         {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}),
    ],
    "Conv2DBackpropInput": [
        ("same", {"input_sizes": (I32, [4], [1, 4, 4, 2]), "filter": (F, [3, 3, 2, 3], None),
                  "out_backprop": (F, [1, 4, 4, 3], None)},
         {"strides": [1, 1, 1, 1], "padding": "SAME"}),
        ("valid stride 2", {"input_sizes": (I32, [4], [1, 4, 4, 2]),
                            "filter": (F, [2, 2, 2, 3], None),
                            "out_backprop": (F, [1, 2, 2, 3], None)},
         {"strides": [1, 2, 2, 1], "padding": "VALID"}),
    ],
    "Conv2DBackpropFilter": [
        ("same", {"input": IMAGE, "filter_sizes": (I32, [4], [3, 3, 2, 3]),
                  "out_backprop": (F, [1, 4, 4, 3], None)},
         {"strides": [1, 1, 1, 1], "padding": "SAME"}),
        ("valid stride 2", {"input": IMAGE, "filter_sizes": (I32, [4], [2, 2, 2, 3]),
                            "out_backprop": (F, [1, 2, 2, 3], None)},
         {"strides": [1, 2, 2, 1], "padding": "VALID"}),
    ],
    "DepthwiseConv2dNative": [
        ("same", {"input": IMAGE, "filter": (F, [3, 3, 2, 2], None)},
         {"strides": [1, 1, 1, 1], "padding": "SAME"}),
        ("valid stride 2", {"input": IMAGE, "filter": (F, [2, 2, 2, 1], None)},
         {"strides": [1, 2, 2, 1], "padding": "VALID"}),
    ],
    "DepthwiseConv2dNativeBackpropInput": [
        ("same", {"input_sizes": (I32, [4], [1, 4, 4, 2]), "filter": (F, [3, 3, 2, 2], None),
                  "out_backprop": (F, [1, 4, 4, 4], None)},
         {"strides": [1, 1, 1, 1], "padding": "SAME"}),
    ],
    "DepthwiseConv2dNativeBackpropFilter": [
        ("same", {"input": IMAGE, "filter_sizes": (I32, [4], [3, 3, 2, 2]),
                  "out_backprop": (F, [1, 4, 4, 4], None)},
         {"strides": [1, 1, 1, 1], "padding": "SAME"}),
    ],
    "DepthToSpace": [
        ("block 2", {"input": (F, [1, 2, 2, 4], None)}, {"block_size": 2}),
        ("depth not divisible", {"input": (F, [1, 2, 2, 6], None)}, {"block_size": 4}),
    ],
    "SpaceToDepth": [
        ("block 2", {"input": IMAGE}, {"block_size": 2}),
        ("size not divisible", {"input": IMAGE}, {"block_size": 3}),
    ],
    "DynamicPartition": [
        ("3 parts", {"data": (F, [6], None), "partitions": (I32, [6], [0, 1, 0, 2, 1, 0])},
         {"num_partitions": 3}),
        ("partition out of range", {"data": (F, [6], None),
                                    "partitions": (I32, [6], [0, 1, 0, 5, 1, 0])},
         {"num_partitions": 3}),
    ],
    "Einsum": [
        ("ij,jk->ik", {"inputs": [(F, [2, 3], None), (F, [3, 2], None)]}, {"equation": "ij,jk->ik"}),
        ("bij,bjk->bik", {"inputs": [(F, [2, 2, 3], None), (F, [2, 3, 2], None)]},
         {"equation": "bij,bjk->bik"}),
        ("ij->ji", {"inputs": [(F, [2, 3], None)]}, {"equation": "ij->ji"}),
        ("mismatch", {"inputs": [(F, [2, 3], None), (F, [2, 2], None)]}, {"equation": "ij,jk->ik"}),
    ],
    "InTopK": [
        ("k 1", {"predictions": (F, [2, 3], None), "targets": (I32, [2], [2, 0])}, {"k": 1}),
        ("k 2", {"predictions": (F, [2, 3], None), "targets": (I32, [2], [2, 1])}, {"k": 2}),
    ],
    "InTopKV2": [
        ("k 2", {"predictions": (F, [2, 3], None), "targets": (I32, [2], [2, 1]),
                 "k": (I32, [], 2)}, {}),
        ("target out of range", {"predictions": (F, [2, 3], None), "targets": (I32, [2], [3, 1]),
                                 "k": (I32, [], 1)}, {}),
    ],
    "MirrorPad": [
        ("reflect", {"input": (F, [2, 3], None), "paddings": (I32, [2, 2], [1, 1, 1, 2])},
         {"mode": "REFLECT"}),
        ("symmetric", {"input": (F, [2, 3], None), "paddings": (I32, [2, 2], [1, 2, 2, 3])},
         {"mode": "SYMMETRIC"}),
        ("reflect too wide", {"input": (F, [2, 3], None), "paddings": (I32, [2, 2], [0, 0, 3, 0])},
         {"mode": "REFLECT"}),
    ],
    "Split": [
        ("2 along 1", {"split_dim": (I32, [], 1), "value": (F, [2, 4], None)}, {"num_split": 2}),
        ("not divisible", {"split_dim": (I32, [], 1), "value": (F, [2, 4], None)},
         {"num_split": 3}),
    ],
    "SplitV": [
        ("1 -1 2", {"value": (F, [2, 5], None), "size_splits": (I64, [3], [1, -1, 2]),
                    "split_dim": (I32, [], 1)}, {"num_split": 3}),
        ("sizes too big", {"value": (F, [2, 5], None), "size_splits": (I64, [3], [1, 3, 2]),
                           "split_dim": (I32, [], 1)}, {"num_split": 3}),
    ],
    "Unpack": [
        ("axis 0", {"value": (F, [2, 3], None)}, {"num": 2, "axis": 0}),
        ("axis -1", {"value": (F, [2, 3], None)}, {"num": 3, "axis": -1}),
        ("num wrong", {"value": (F, [2, 3], None)}, {"num": 3, "axis": 0}),
    ],
    "BatchMatMulV2": [
        ("broadcast", {"x": (F, [2, 2, 3], None), "y": (F, [3, 2], None)}, {}),
        ("adjoint x", {"x": (F, [2, 3, 2], None), "y": (F, [2, 3, 2], None)}, {"adj_x": True}),
        ("batch mismatch", {"x": (F, [2, 2, 3], None), "y": (F, [3, 3, 2], None)}, {}),
    ],
    "BatchMatMulV3": [
        ("int8 x uint8", {"x": (types_pb2.DT_INT8, [2, 2, 3], [1, -2, 3, 4, 5, -6, 7, 8, 9, -1, 0, 2]),
                          "y": (U8, [3, 2], [1, 2, 30, 4, 250, 6])}, {"Tout": I32}),
        ("float, adjoint y", {"x": (F, [2, 2, 3], None), "y": (F, [2, 2, 3], None)},
         {"Tout": F, "adj_y": True}),
        ("mismatch", {"x": (types_pb2.DT_INT8, [2, 3], [1, 2, 3, 4, 5, 6]),
                      "y": (types_pb2.DT_INT8, [2, 3], [1, 2, 3, 4, 5, 6])}, {"Tout": I32}),
    ],
    "BroadcastTo": [
        ("3 to 2x3", {"input": (F, [3], None), "shape": (I32, [2], [2, 3])}, {}),
        ("3 to 2x4", {"input": (F, [3], None), "shape": (I32, [2], [2, 4])}, {}),
    ],
    "Fill": [
        ("2x3", {"dims": (I32, [2], [2, 3]), "value": (F, [], 1.5)}, {}),
        ("negative", {"dims": (I32, [2], [-1, 3]), "value": (F, [], 1.5)}, {}),
    ],
    "FusedBatchNormV3": [
        ("training", {"x": IMAGE, "scale": (F, [2], [1.5, 0.5]), "offset": (F, [2], [0.1, -0.2]),
                      "mean": (F, [0], []), "variance": (F, [0], [])},
         {"epsilon": 0.001, "is_training": True}, {"compare": 3}),
        ("inference", {"x": IMAGE, "scale": (F, [2], [1.5, 0.5]), "offset": (F, [2], [0.1, -0.2]),
                       "mean": (F, [2], [0.5, -1.0]), "variance": (F, [2], [2.0, 0.25])},
         {"epsilon": 0.001, "is_training": False}, {"compare": 1}),
    ],
    "FusedBatchNorm": [
        ("training", {"x": IMAGE, "scale": (F, [2], [1.5, 0.5]), "offset": (F, [2], [0.1, -0.2]),
                      "mean": (F, [0], []), "variance": (F, [0], [])},
         {"epsilon": 0.001, "is_training": True}, {"compare": 3}),
    ],
    "FusedBatchNormV2": [
        ("inference", {"x": IMAGE, "scale": (F, [2], [1.5, 0.5]), "offset": (F, [2], [0.1, -0.2]),
                       "mean": (F, [2], [0.5, -1.0]), "variance": (F, [2], [2.0, 0.25])},
         {"epsilon": 0.001, "is_training": False}, {"compare": 1}),
    ],
    "FusedBatchNormGrad": [
        ("training", {"y_backprop": (F, [1, 4, 4, 2], None), "x": IMAGE,
                      "scale": (F, [2], [1.5, 0.5]), "reserve_space_1": (F, [2], [0.0, 0.14285714]),
                      "reserve_space_2": (F, [2], [1.3061224, 1.3061224])},
         {"epsilon": 0.001, "is_training": True}, {"compare": 3}),
    ],
    "FusedBatchNormGradV2": [
        ("training", {"y_backprop": (F, [1, 4, 4, 2], None), "x": IMAGE,
                      "scale": (F, [2], [1.5, 0.5]), "reserve_space_1": (F, [2], [0.0, 0.14285714]),
                      "reserve_space_2": (F, [2], [1.3061224, 1.3061224])},
         {"epsilon": 0.001, "is_training": True}, {"compare": 3}),
    ],
    "LRNGrad": [
        ("defaults", {"input_grads": (F, [1, 2, 2, 6], None), "input_image": LRN_IN,
                      "output_image": (F, [1, 2, 2, 6], LRN_OUT)}, {}),
    ],
    # The reserve spaces as TF's CPU kernel keeps them: the batch's mean and
    # variance.
    "FusedBatchNormGradV3": [
        ("training", {"y_backprop": (F, [1, 4, 4, 2], None), "x": IMAGE,
                      "scale": (F, [2], [1.5, 0.5]), "reserve_space_1": (F, [2], [0.0, 0.14285714]),
                      "reserve_space_2": (F, [2], [1.3061224, 1.3061224]),
                      "reserve_space_3": (F, [0], [])},
         {"epsilon": 0.001, "is_training": True}, {"compare": 3}),
    ],
    "BatchMatMul": [
        ("2 batches", {"x": (F, [2, 2, 3], None), "y": (F, [2, 3, 2], None)}, {}),
        ("adjoint y", {"x": (F, [2, 2, 3], None), "y": (F, [2, 2, 3], None)}, {"adj_y": True}),
    ],
    "ResizeBilinearGrad": [
        ("3x4 to 2x2", {"grads": (F, [1, 3, 4, 1], None), "original_image": (F, [1, 2, 2, 1], None)},
         {}),
        ("half pixel", {"grads": (F, [1, 3, 4, 1], None),
                        "original_image": (F, [1, 2, 2, 1], None)}, {"half_pixel_centers": True}),
    ],
    "ResizeNearestNeighborGrad": [
        ("4x4 to 2x2", {"grads": (F, [1, 4, 4, 1], None), "size": (I32, [2], [2, 2])}, {}),
    ],
    "StridedSliceGrad": [
        ("stride 2", {"shape": (I32, [2], [3, 4]), "begin": (I32, [2], [0, 1]),
                      "end": (I32, [2], [3, 4]), "strides": (I32, [2], [2, 1]),
                      "dy": (F, [2, 3], None)}, {}),
    ],
    "TensorScatterUpdate": [
        ("two rows", {"tensor": (F, [5], None), "indices": (I32, [2, 1], [1, 3]),
                      "updates": (F, [2], [9, 10])}, {}),
        ("out of range", {"tensor": (F, [5], None), "indices": (I32, [1, 1], [7]),
                          "updates": (F, [1], [9])}, {}),
        ("out of range ignored", {"tensor": (F, [5], None), "indices": (I32, [2, 1], [7, 2]),
                                  "updates": (F, [2], [9, 10])}, {"bad_indices_policy": "IGNORE"}),
    ],
    **{op: [
        ("duplicates", {"tensor": (F, [3, 2], None), "indices": (I32, [3, 1], [1, 0, 1]),
                        "updates": (F, [3, 2], [9, -9, 8, 8, 1, 10])}, {}),
        ("int64 out of range", {"tensor": (I64, [3, 2], None), "indices": (I64, [2, 1], [1, 3]),
                                "updates": (I64, [2, 2], [9, -9, 8, 8])}, {}),
        ("out of range ignored", {"tensor": (F, [3, 2], None), "indices": (I32, [3, 1], [1, 7, 1]),
                                  "updates": (F, [3, 2], [9, -9, 8, 8, 1, 10])},
         {"bad_indices_policy": "IGNORE"}),
    ] for op in ("TensorScatterAdd", "TensorScatterSub", "TensorScatterMax", "TensorScatterMin")},
    "MaxPoolGradGrad": [
        ("2x2 valid", {"orig_input": IMAGE, "orig_output": (F, [1, 2, 2, 2], MAXPOOL_2X2),
                       "grad": (F, [1, 4, 4, 2], None)},
         {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}),
    ],
    "MirrorPadGrad": [
        ("reflect", {"input": (F, [4, 6], None), "paddings": (I32, [2, 2], [1, 1, 1, 2])},
         {"mode": "REFLECT"}),
        ("symmetric", {"input": (F, [4, 6], None), "paddings": (I32, [2, 2], [1, 1, 1, 2])},
         {"mode": "SYMMETRIC"}),
    ],
    "PlaceholderWithDefault": [
        ("2x3", {"input": (F, [2, 3], None)}, {"dtype": F, "shape": [2, 3]}),
        ("?x3", {"input": (F, [2, 3], None)}, {"dtype": F, "shape": [-1, 3]}),
        ("wrong shape", {"input": (F, [2, 3], None)}, {"dtype": F, "shape": [3, 3]}),
    ],
    "CheckNumericsV2": [
        ("finite", {"tensor": (F, [2, 3], None)}, {"message": "checked"}),
        ("NaN and infinities", {"tensor": (F, [6], EDGES["float"][0])}, {"message": "checked"}),
        ("minus infinity", {"tensor": (D, [2], [1.0, -np.inf])}, {"message": "checked"}),
    ],
    "EnsureShape": [
        ("compatible", {"input": (F, [2, 3], None)}, {"shape": [-1, 3]}),
        ("unknown rank", {"input": (I32, [2], [1, 2])}, {"shape": None}),
        ("incompatible", {"input": (F, [2, 3], None)}, {"shape": [2, 4]}),
        ("rank differs", {"input": (F, [6], None)}, {"shape": [2, 3]}),
    ],
    "CheckNumerics": [
        ("finite", {"tensor": (F, [2, 3], None)}, {"message": "checked"}),
        ("NaN", {"tensor": (F, [6], EDGES["float"][0])}, {"message": "checked"}),
        ("double infinity", {"tensor": (D, [2], [1.0, np.inf])}, {"message": "checked"}),
    ],
    "RandomUniform": [
        ("seeded 2x3", {"shape": (I32, [2], [2, 3])}, {"seed": 7, "seed2": 3, "dtype": F}),
        ("seeded double", {"shape": (I32, [1], [5])}, {"seed": 1, "seed2": 2, "dtype": D}),
        ("seeded half", {"shape": (I32, [1], [6])}, {"seed": 7, "seed2": 3, "dtype": SIXTEEN[0]}),
        ("seeded bfloat16", {"shape": (I32, [1], [6])},
         {"seed": 7, "seed2": 3, "dtype": SIXTEEN[1]}),
    ],
    "RandomStandardNormal": [
        ("seeded 2x3", {"shape": (I32, [2], [2, 3])}, {"seed": 7, "seed2": 3, "dtype": F}),
        ("seeded double", {"shape": (I32, [1], [5])}, {"seed": 1, "seed2": 2, "dtype": D}),
    ],
    "TruncatedNormal": [
        ("seeded 2x3", {"shape": (I32, [2], [2, 3])}, {"seed": 7, "seed2": 3, "dtype": F}),
        ("seeded 9 doubles", {"shape": (I32, [1], [9])}, {"seed": 1, "seed2": 2, "dtype": D}),
    ],
    "RandomGamma": [
        ("seeded", {"shape": (I32, [1], [3]), "alpha": (D, [4], [0.5, 1.0, 2.5, 9.0])},
         {"seed": 7, "seed2": 3}),
        ("float, 2-D shape", {"shape": (I64, [2], [2, 1]), "alpha": (F, [3], [0.3, 1.0, 4.0])},
         {"seed": 7, "seed2": 3}),
        ("no alphas", {"shape": (I32, [1], [2]), "alpha": (F, [0], [])}, {"seed": 1}),
    ],
    "RandomPoissonV2": [
        ("seeded", {"shape": (I32, [1], [3]), "rate": (D, [4], [0.5, 4.0, 12.0, 150.0])},
         {"seed": 7, "seed2": 3}),
        ("int32 rates", {"shape": (I32, [1], [2]), "rate": (I32, [2], [3, 30])},
         {"seed": 7, "seed2": 3, "dtype": I32}),
        ("float", {"shape": (I64, [1], [4]), "rate": (F, [2], [2.5, 20.0])},
         {"seed": 1, "seed2": 2, "dtype": F}),
    ],
    "StatelessRandomGammaV2": [
        ("seed pair", {"shape": (I32, [2], [3, 4]), "seed": (I64, [2], [1, 2]),
                       "alpha": (D, [4], [0.5, 1.0, 2.5, 9.0])}, {}),
        ("int32 seed, float", {"shape": (I64, [2], [2, 3]), "seed": (I32, [2], [-7, 123456]),
                               "alpha": (F, [3], [0.3, 1.0, 4.0])}, {}),
        ("shape not ending with alpha's", {"shape": (I32, [2], [3, 2]), "seed": (I64, [2], [1, 2]),
                                          "alpha": (F, [3], [1.0, 2.0, 3.0])}, {}),
    ],
    "StatelessRandomGammaV3": [
        ("philox", {"shape": (I32, [2], [3, 4]), "key": (U64, [1], [10413732777507651514]),
                    "counter": (U64, [2], [0, 17830669156045600267]), "alg": (I32, [], 1),
                    "alpha": (D, [4], [0.5, 1.0, 2.5, 9.0])}, {}),
    ],
    "StatelessRandomPoisson": [
        ("seed pair", {"shape": (I32, [2], [3, 4]), "seed": (I64, [2], [1, 2]),
                       "lam": (D, [4], [0.5, 4.0, 12.0, 150.0])}, {"dtype": I64}),
        ("int32 rates", {"shape": (I32, [2], [2, 2]), "seed": (I64, [2], [1, 2]),
                         "lam": (I32, [2], [3, 30])}, {"dtype": I32}),
        ("float", {"shape": (I32, [2], [2, 2]), "seed": (I64, [2], [1, 2]),
                   "lam": (F, [2], [2.5, 20.0])}, {"dtype": F}),
    ],
    "StatelessRandomBinomial": [
        ("broadcast", {"shape": (I32, [3], [3, 2, 4]), "seed": (I64, [2], [1, 2]),
                       "counts": (D, [2, 1], [5.0, 100.0]),
                       "probs": (D, [4], [0.3, 0.5, 0.8, 0.97])}, {"dtype": I64}),
        ("float", {"shape": (I32, [2], [2, 3]), "seed": (I32, [2], [3, 4]),
                   "counts": (F, [3], [10.0, 1000.0, 7.0]), "probs": (F, [3], [0.1, 0.25, 0.0])},
         {"dtype": F}),
        ("incompatible", {"shape": (I32, [1], [3]), "seed": (I64, [2], [1, 2]),
                          "counts": (D, [2], [1.0, 2.0]), "probs": (D, [3], [0.5, 0.5, 0.5])},
         {"dtype": I64}),
    ],
    "FractionalMaxPool": [
        ("shuffled", {"value": (F, [2, 7, 9, 2], None)},
         {"pooling_ratio": [1.0, 1.5, 2.0, 1.0], "deterministic": True, "seed": 7, "seed2": 3}),
        ("pseudo-random, overlapping", {"value": (D, [1, 6, 7, 3], None)},
         {"pooling_ratio": [1.0, 1.44, 1.73, 1.0], "pseudo_random": True, "overlapping": True,
          "deterministic": True, "seed": 1, "seed2": 2}),
        ("int32", {"value": (I32, [1, 5, 5, 1], None)},
         {"pooling_ratio": [1.0, 1.3, 1.3, 1.0], "deterministic": True, "seed": 3, "seed2": 4}),
        ("ratio past the input", {"value": (F, [1, 2, 5, 1], None)},
         {"pooling_ratio": [1.0, 3.0, 1.5, 1.0], "deterministic": True, "seed": 3, "seed2": 4}),
    ],
    "FractionalAvgPool": [
        ("overlapping", {"value": (F, [2, 7, 9, 2], None)},
         {"pooling_ratio": [1.0, 1.5, 2.0, 1.0], "overlapping": True, "deterministic": True,
          "seed": 7, "seed2": 3}),
        ("pseudo-random, int64", {"value": (I64, [1, 6, 7, 2], None)},
         {"pooling_ratio": [1.0, 1.44, 1.73, 1.0], "pseudo_random": True, "deterministic": True,
          "seed": 1, "seed2": 2}),
    ],
    "FractionalMaxPoolGrad": [
        ("windows", {"orig_input": (F, [1, 3, 3, 1], [1, 2, 3, 4, 5, 6, 7, 8, 9]),
                     "orig_output": (F, [1, 2, 2, 1], [4, 6, 7, 9]),
                     "out_backprop": (F, [1, 2, 2, 1], [5, 6, 8, 9]),
                     "row_pooling_sequence": (I64, [3], [0, 2, 3]),
                     "col_pooling_sequence": (I64, [3], [0, 1, 3])}, {}),
    ],
    "FractionalAvgPoolGrad": [
        ("windows", {"orig_input_tensor_shape": (I64, [4], [1, 3, 3, 1]),
                     "out_backprop": (F, [1, 2, 2, 1], [5, 6, 8, 9]),
                     "row_pooling_sequence": (I64, [3], [0, 2, 3]),
                     "col_pooling_sequence": (I64, [3], [0, 1, 3])}, {"overlapping": True}),
    ],
    "RandomGammaGrad": [
        ("broadcast", {"alpha": (F, [2, 1], [0.5, 3.0]), "sample": (F, [3], [0.2, 1.5, 3.0])}, {}),
        ("double", {"alpha": (D, [4], [0.5, 1.0, 2.5, 9.0]), "sample": (D, [4], [0.2, 1.5, 3.0, 7.0])},
         {}),
    ],
    "RandomUniformInt": [
        ("seeded [-5, 9)", {"shape": (I32, [1], [6]), "minval": (I32, [], -5),
                            "maxval": (I32, [], 9)}, {"seed": 7, "seed2": 3}),
        ("empty range", {"shape": (I32, [1], [6]), "minval": (I32, [], 5), "maxval": (I32, [], 5)},
         {"seed": 7, "seed2": 3}),
    ],
    "Multinomial": [
        ("seeded", {"logits": (F, [3, 4], [0.5, 1.0, -1.0, 2.0, 0, 0, 0, 0, -np.inf, 1.0, -np.inf, 1.0]),
                    "num_samples": (I32, [], 7)}, {"seed": 7, "seed2": 3}),
        ("double, int32", {"logits": (D, [2, 5], None), "num_samples": (I32, [], 9)},
         {"seed": 1, "seed2": 2, "output_dtype": I32}),
        ("not a matrix", {"logits": (F, [4], None), "num_samples": (I32, [], 2)}, {"seed": 1}),
    ],
    "LogUniformCandidateSampler": [
        ("unique", {"true_classes": (I64, [2, 2], [1, 2, 3, 4])},
         {"num_true": 2, "num_sampled": 5, "unique": True, "range_max": 10, "seed": 7, "seed2": 3}),
        ("a million ids", {"true_classes": (I64, [2, 2], [1, 2, 3, 4])},
         {"num_true": 2, "num_sampled": 6, "unique": False, "range_max": 1000000, "seed": 7,
          "seed2": 3}),
        ("class out of range", {"true_classes": (I64, [1, 2], [1, 10])},
         {"num_true": 2, "num_sampled": 3, "unique": True, "range_max": 10, "seed": 7}),
    ],
    "UniformCandidateSampler": [
        ("unique", {"true_classes": (I64, [2, 2], [1, 2, 3, 4])},
         {"num_true": 2, "num_sampled": 5, "unique": True, "range_max": 10, "seed": 7, "seed2": 3}),
        ("past 2^32", {"true_classes": (I64, [2, 2], [1, 2, 3, 4])},
         {"num_true": 2, "num_sampled": 4, "unique": False, "range_max": 2 ** 40 + 3, "seed": 7,
          "seed2": 3}),
        ("range too small", {"true_classes": (I64, [2, 2], [1, 2, 3, 4])},
         {"num_true": 2, "num_sampled": 11, "unique": True, "range_max": 10, "seed": 7}),
    ],
    "LearnedUnigramCandidateSampler": [
        ("unique", {"true_classes": (I64, [2, 2], [1, 2, 3, 4])},
         {"num_true": 2, "num_sampled": 3, "unique": True, "range_max": 6, "seed": 7, "seed2": 3}),
    ],
    "ThreadUnsafeUnigramCandidateSampler": [
        ("repeats", {"true_classes": (I64, [2, 2], [1, 2, 3, 4])},
         {"num_true": 2, "num_sampled": 4, "unique": False, "range_max": 5, "seed": 7, "seed2": 3}),
    ],
    "FixedUnigramCandidateSampler": [
        ("unigrams, distortion", {"true_classes": (I64, [2, 2], [1, 2, 3, 4])},
         {"num_true": 2, "num_sampled": 4, "unique": True, "range_max": 7,
          "unigrams": [1.0, 2.0, 3.0, 4.0, 5.0, 0.5, 8.0], "distortion": 0.75, "seed": 7,
          "seed2": 3}),
        ("shard 1 of 2", {"true_classes": (I64, [2, 1], [1, 3])},
         {"num_true": 1, "num_sampled": 3, "unique": False, "range_max": 4,
          "unigrams": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "num_reserved_ids": 3, "num_shards": 2,
          "shard": 1, "seed": 7, "seed2": 3}),
        ("weights size", {"true_classes": (I64, [2, 2], [1, 2, 3, 4])},
         {"num_true": 2, "num_sampled": 4, "unique": True, "range_max": 7,
          "unigrams": [1.0] * 6, "seed": 7}),
    ],
    "AllCandidateSampler": [
        ("all", {"true_classes": (I64, [2, 1], [0, 2])},
         {"num_true": 1, "num_sampled": 4, "unique": True, "seed": 7, "seed2": 3}),
    ],
    "ComputeAccidentalHits": [
        ("hits", {"true_classes": (I64, [3, 2], [1, 7, 3, 1, 9, 9]),
                  "sampled_candidates": (I64, [5], [7, 1, 5, 9, 7])}, {"num_true": 2}),
        ("no hits", {"true_classes": (I64, [2, 1], [4, 6]),
                     "sampled_candidates": (I64, [3], [0, 1, 2])}, {"num_true": 1}),
    ],
    "StatelessMultinomial": [
        ("seed pair", {"logits": (F, [3, 4], None), "num_samples": (I32, [], 6),
                       "seed": (I64, [2], [3, 4])}, {}),
        ("int32 seed", {"logits": (D, [2, 6], None), "num_samples": (I32, [], 5),
                        "seed": (I32, [2], [-1, 9])}, {"output_dtype": I32}),
        ("all -inf", {"logits": (F, [1, 2], [-np.inf, -np.inf]), "num_samples": (I32, [], 2),
                      "seed": (I64, [2], [1, 1])}, {}),
        ("no classes", {"logits": (F, [2, 0], None), "num_samples": (I32, [], 2),
                        "seed": (I64, [2], [1, 2])}, {}),
    ],
    "RandomShuffle": [
        ("seeded 6", {"value": (F, [6], None)}, {"seed": 7, "seed2": 3}),
    ],
    "StaticRegexFullMatch": [
        ("t.*", {"input": (STR, [6], None)}, {"pattern": "t.*"}),
        ("[a-z]/[a-z]", {"input": (STR, [6], None)}, {"pattern": "[a-z]/[a-z]"}),
    ],
    "StaticRegexReplace": [
        ("punctuation", {"input": (STR, [3], [b"hello, world!!", b"a.b", b""])},
         {"pattern": "[!,.]", "rewrite": ""}),
        ("groups once", {"input": (STR, [2], [b"john smith", b"a b c"])},
         {"pattern": r"(\w+) (\w+)", "rewrite": r"\2 \1", "replace_global": False}),
        ("empty matches", {"input": (STR, [2], [b"abc", b""])}, {"pattern": "x*", "rewrite": "-"}),
        ("bad pattern", {"input": (STR, [1], [b"abc"])}, {"pattern": "(", "rewrite": "-"}),
    ],
    "RegexReplace": [
        ("scalars", {"input": (STR, [2], [b"aa", b"ba"]), "pattern": (STR, [], [b"a"]),
                     "rewrite": (STR, [], [b"<\\0>"])}, {}),
    ],
    "StringSplit": [
        ("any byte", {"input": (STR, [3], [b"a,b;;c", b"", b"x"]),
                      "delimiter": (STR, [], [b",;"])}, {}),
        ("keep empty", {"input": (STR, [3], [b"a,b;;c", b"", b"x"]),
                        "delimiter": (STR, [], [b",;"])}, {"skip_empty": False}),
        ("bytes", {"input": (STR, [2], [b"abc", b"de"]), "delimiter": (STR, [], [b""])}, {}),
    ],
    "StringSplitV2": [
        ("whitespace", {"input": (STR, [4], [b"hello world", b"  a  b ", b"", b"x\ty\n"]),
                        "sep": (STR, [], [b""])}, {}),
        ("separator", {"input": (STR, [3], [b"x,y,,z", b"", b","]), "sep": (STR, [], [b","])}, {}),
        ("maxsplit", {"input": (STR, [2], [b"a b c d", b"  a  b c "]), "sep": (STR, [], [b""])},
         {"maxsplit": 2}),
        ("scalar input", {"input": (STR, [], [b"a b"]), "sep": (STR, [], [b""])}, {}),
    ],
    "UnicodeDecode": [
        ("utf-8", {"input": (STR, [4], ["h\u00e9llo".encode(), b"", b"a\xffb", b"\xe2\x82x"])},
         {"input_encoding": "UTF-8"}),
        ("ignore, int32", {"input": (STR, [2], [b"a\xffb", b"\x01c"])},
         {"input_encoding": "UTF-8", "errors": "ignore", "Tsplits": I32,
          "replace_control_characters": True}),
        ("utf-16", {"input": (STR, [2], [b"\x00a\xd8\x3d\xde\x00", b"\x00"])},
         {"input_encoding": "UTF-16-BE"}),
        ("strict", {"input": (STR, [1], [b"a\xff"])}, {"input_encoding": "UTF-8", "errors": "strict"}),
    ],
    "UnicodeDecodeWithOffsets": [
        ("utf-8", {"input": (STR, [3], ["h\u00e9".encode(), b"a\xffb", b"\xf0\x9f\x98\x80"])},
         {"input_encoding": "UTF-8"}),
    ],
    "UnicodeEncode": [
        ("rows", {"input_values": (I32, [5], [104, 233, 0x1F600, -1, 98]),
                  "input_splits": (I64, [4], [0, 2, 3, 5])}, {"output_encoding": "UTF-8"}),
        ("utf-16", {"input_values": (I32, [2], [104, 0x1F600]), "input_splits": (I32, [2], [0, 2])},
         {"output_encoding": "UTF-16-BE", "errors": "ignore"}),
        ("bad splits", {"input_values": (I32, [2], [104, 105]),
                        "input_splits": (I64, [3], [0, 3, 2])}, {"output_encoding": "UTF-8"}),
    ],
    "UnicodeTranscode": [
        ("to utf-32", {"input": (STR, [2], ["h\u00e9".encode(), b"a\xffb"])},
         {"input_encoding": "UTF-8", "output_encoding": "UTF-32-BE"}),
    ],
    "Complex": [
        ("float", {"real": (F, [2, 3], None), "imag": (F, [2, 3], None)}, {"Tout": C64}),
        ("double broadcast", {"real": (D, [2, 3], None), "imag": (D, [3], None)}, {"Tout": C128}),
        ("bad broadcast", {"real": (F, [2, 3], None), "imag": (F, [2], None)}, {"Tout": C64}),
    ],
    **{op: [("complex64", {arg: (C64, [2, 3], None)}, {"Tout": F}),
            ("complex128", {arg: (C128, [6], None)}, {"Tout": D}),
            ("edges", {arg: (C64, [4], [0j, -0.0 + 0j, complex("inf"), 3e38 + 3e38j])},
             {"Tout": F})]
       for op, arg in [("Real", "input"), ("Imag", "input"), ("Angle", "input"),
                       ("ComplexAbs", "x")]},
    "Conj": [("complex64", {"input": (C64, [2, 3], None)}, {}),
             ("complex128", {"input": (C128, [6], None)}, {})],
    **{op: [("complex64", {"input": (C64, [2, 2, 2, 3], None)}, {}),
            ("complex128 length 5", {"input": (C128, [2, 5, 5, 5], np.sin(np.arange(250)) * (0.5 - 0.25j))},
             {}),
            ("scalar", {"input": (C64, [], None)}, {})]
       for op in ["FFT", "IFFT", "FFT2D", "IFFT2D", "FFT3D", "IFFT3D"]},
    **{op: [("float", {"input": (F, [2, 3, 4, 6], None), "fft_length": (I32, [rank], [3, 4, 6][-rank:])},
             {}),
            ("cropped odd", {"input": (F, [2, 3, 4, 7], None),
                             "fft_length": (I32, [rank], [2, 3, 5][-rank:])}, {}),
            ("double", {"input": (D, [3, 4, 8], None), "fft_length": (I32, [rank], [3, 4, 8][-rank:])},
             {"Tcomplex": C128}),
            ("too short", {"input": (F, [2, 3], None), "fft_length": (I32, [rank], [4] * rank)}, {}),
            ("bad fft_length", {"input": (F, [2, 3, 4], None), "fft_length": (I32, [1], [-2])}, {})]
       for op, rank in [("RFFT", 1), ("RFFT2D", 2), ("RFFT3D", 3)]},
    **{op: [("even", {"input": (C64, [2, 3, 4, 4], None),
                      "fft_length": (I32, [rank], [3, 4, 6][-rank:])}, {}),
            ("odd cropped", {"input": (C64, [2, 3, 4, 5], None),
                             "fft_length": (I32, [rank], [2, 3, 7][-rank:])}, {}),
            ("double", {"input": (C128, [3, 4, 5], None), "fft_length": (I32, [rank], [3, 4, 8][-rank:])},
             {"Treal": D}),
            ("too short", {"input": (C64, [2, 2], None), "fft_length": (I32, [rank], [8] * rank)}, {})]
       for op, rank in [("IRFFT", 1), ("IRFFT2D", 2), ("IRFFT3D", 3)]},
    "CombinedNonMaxSuppression": [
        (name, {"boxes": (F, [2, 6, q, 4], boxes), "scores": (F, [2, 6, 3], None),
                "max_output_size_per_class": (I32, [], per_class),
                "max_total_size": (I32, [], total), "iou_threshold": (F, [], 0.4),
                "score_threshold": (F, [], 0.2)}, attrs)
        for name, q, boxes, per_class, total, attrs in [
            ("shared boxes", 1, np.abs(np.sin(np.arange(48))) * 1.2, 3, 5, {}),
            ("per-class boxes, padded per class", 3, np.abs(np.cos(np.arange(144))), 2, 10,
             {"pad_per_class": True, "clip_boxes": False}),
        ]
    ] + [
        ("bad iou", {"boxes": (F, [1, 2, 1, 4], None), "scores": (F, [1, 2, 2], None),
                     "max_output_size_per_class": (I32, [], 2), "max_total_size": (I32, [], 2),
                     "iou_threshold": (F, [], 1.5), "score_threshold": (F, [], 0.0)}, {}),
    ],
    **{op: [
        (f"axes {axes}{' kept' if keep else ''}",
         {"input_indices": (I64, [5, 3], [0, 0, 1, 0, 2, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0]),
          "input_values": (F, [5], [1, -2, 3, -4, 5]), "input_shape": (I64, [3], [2, 3, 2]),
          "reduction_axes": (I32, [len(axes)], axes)}, {"keep_dims": keep})
        for axes, keep in [([1], False), ([0, 2], True), ([], False), ([-1], False),
                           ([0, 1, 2], False), ([3], False)]
    ] for op in ["SparseReduceSum", "SparseReduceMax"]},
    "ScaleAndTranslate": [
        (f"{kernel} down", {"images": (F, [2, 5, 6, 2], np.arange(120) % 7 - 3.0),
                            "size": (I32, [2], [3, 4]), "scale": (F, [2], [0.6, 4 / 6]),
                            "translation": (F, [2], [0.0, 0.0])}, {"kernel_type": kernel})
        for kernel in ["lanczos1", "lanczos3", "lanczos5", "gaussian", "box", "triangle",
                       "keyscubic", "mitchellcubic"]
    ] + [
        ("lanczos3 up, translated", {"images": (F, [2, 5, 6, 2], None), "size": (I32, [2], [7, 9]),
                                     "scale": (F, [2], [1.4, 1.5]),
                                     "translation": (F, [2], [0.5, -1.0])},
         {"antialias": False}),
        ("int32 images", {"images": (I32, [1, 5, 6, 1], None), "size": (I32, [2], [2, 2]),
                          "scale": (F, [2], [0.4, 1 / 3]), "translation": (F, [2], [0.0, 0.0])},
         {}),
        ("zero scale", {"images": (F, [1, 5, 6, 1], None), "size": (I32, [2], [2, 2]),
                        "scale": (F, [2], [0.0, 1.0]), "translation": (F, [2], [0.0, 0.0])}, {}),
        ("bad kernel", {"images": (F, [1, 5, 6, 1], None), "size": (I32, [2], [2, 2]),
                        "scale": (F, [2], [1.0, 1.0]), "translation": (F, [2], [0.0, 0.0])},
         {"kernel_type": "cubic"}),
    ],
    "ScaleAndTranslateGrad": [
        ("lanczos3", {"grads": (F, [2, 3, 4, 2], np.arange(48) / 10),
                      "original_image": (F, [2, 5, 6, 2], None), "scale": (F, [2], [0.6, 4 / 6]),
                      "translation": (F, [2], [0.0, 0.0])}, {}),
        ("triangle translated", {"grads": (F, [1, 7, 9, 1], None),
                                 "original_image": (F, [1, 5, 6, 1], None),
                                 "scale": (F, [2], [1.4, 1.5]), "translation": (F, [2], [0.5, -1.0])},
         {"kernel_type": "triangle", "antialias": False}),
    ],
    "MergeSummary": [
        ("two", {"inputs": [(STR, [], [SUMMARY_LOSS]), (STR, [2], [SUMMARY_LR, b""])]}, {}),
        ("duplicate tag", {"inputs": [(STR, [], [SUMMARY_LOSS]), (STR, [], [SUMMARY_LOSS])]}, {}),
        ("not a Summary", {"inputs": [(STR, [], [b"\xff\xff garbage"])]}, {}),
    ],
    "Gather": [
        ("rows", {"params": (F, [2, 3], None), "indices": (I32, [3], [1, 0, 1])}, {}),
        ("out of range", {"params": (F, [2, 3], None), "indices": (I32, [1], [2])}, {}),
    ],
    "GatherNd": [
        ("elements", {"params": (F, [2, 3], None), "indices": (I32, [2, 2], [0, 1, 1, 2])}, {}),
        ("rows", {"params": (F, [2, 3], None), "indices": (I64, [2, 1], [1, 0])}, {}),
        ("out of range", {"params": (F, [2, 3], None), "indices": (I32, [1, 2], [2, 0])}, {}),
        ("out of range ignored", {"params": (F, [2, 3], None),
                                  "indices": (I32, [2, 2], [2, 0, 1, 1])},
         {"bad_indices_policy": "IGNORE"}),
    ],
    "InvertPermutation": [
        ("permutation", {"x": (I32, [4], [2, 0, 3, 1])}, {}),
        ("repeated", {"x": (I32, [4], [0, 0, 1, 2])}, {}),
    ],
    "LRN": [("defaults", {"input": (F, [1, 2, 2, 6], None)}, {}),
            ("radius 1", {"input": (F, [1, 2, 2, 6], None)},
             {"depth_radius": 1, "bias": 2.0, "alpha": 0.5, "beta": 0.75})],
    "PadV2": [
        ("constant 9", {"input": (F, [2, 3], None), "paddings": (I32, [2, 2], [1, 0, 0, 1]),
                        "constant_values": (F, [], 9.0)}, {}),
    ],
    "DecodeJpeg": [
        ("TF's JPEG", {"contents": _bytes(_JPEG)}, {}),
        ("grey, ratio 2", {"contents": _bytes(_JPEG)}, {"channels": 1, "ratio": 2}),
        ("accurate DCT, plain upsampling", {"contents": _bytes(_JPEG)},
         {"dct_method": "INTEGER_ACCURATE", "fancy_upscaling": False}),
        ("a PNG", {"contents": _bytes(_PNG)}, {}),
        ("truncated", {"contents": _bytes(_JPEG[:-40])}, {}),
        ("garbage", {"contents": _bytes(b"garbage!")}, {}),
    ],
    "DecodeAndCropJpeg": [
        ("window", {"contents": _bytes(_JPEG), "crop_window": (I32, [4], [1, 2, 3, 4])}, {}),
        ("outside", {"contents": _bytes(_JPEG), "crop_window": (I32, [4], [0, 0, 7, 8])}, {}),
    ],
    "ExtractJpegShape": [("TF's JPEG", {"contents": _bytes(_JPEG)}, {}),
                         ("garbage", {"contents": _bytes(b"garbage!")}, {})],
    "DecodePng": [
        ("TF's PNG", {"contents": _bytes(_PNG)}, {}),
        ("grey", {"contents": _bytes(_PNG)}, {"channels": 1}),
        ("RGBA", {"contents": _bytes(_PNG)}, {"channels": 4}),
        ("uint16", {"contents": _bytes(_PNG)}, {"dtype": types_pb2.DT_UINT16}),
        ("a JPEG", {"contents": _bytes(_JPEG)}, {}),
    ],
    "DecodeImage": [
        ("float PNG", {"contents": _bytes(_PNG)}, {"dtype": F, "expand_animations": False}),
        ("float JPEG", {"contents": _bytes(_JPEG)}, {"dtype": F}),
        ("uint16 JPEG", {"contents": _bytes(_JPEG)}, {"dtype": types_pb2.DT_UINT16}),
    ],
    "SampleDistortedBoundingBoxV2": [
        ("seeded", {"image_size": (I32, [3], [375, 500, 3]),
                    "bounding_boxes": (F, [1, 1, 4], [0.1, 0.2, 0.8, 0.9]),
                    "min_object_covered": (F, [], 0.1)}, {"seed": 1, "seed2": 2}),
        ("whole image", {"image_size": (I64, [3], [224, 224, 3]),
                         "bounding_boxes": (F, [1, 0, 4], None),
                         "min_object_covered": (F, [], 0.5)},
         {"seed": 7, "aspect_ratio_range": [0.5, 2.0], "area_range": [0.08, 1.0],
          "use_image_if_no_bounding_boxes": True}),
        ("box outside", {"image_size": (I32, [3], [10, 10, 3]),
                         "bounding_boxes": (F, [1, 1, 4], [0, 0, 1.5, 1]),
                         "min_object_covered": (F, [], 0.1)}, {"seed": 1}),
    ],
    "SampleDistortedBoundingBox": [
        ("seeded", {"image_size": (I32, [3], [375, 500, 3]),
                    "bounding_boxes": (F, [1, 1, 4], [0.1, 0.2, 0.8, 0.9])},
         {"seed": 3, "seed2": 4, "min_object_covered": 0.5}),
    ],
    "EncodeJpeg": [("RGB", {"image": (U8, [6, 8, 3], _PIXELS)}, {}),
                   ("two channels", {"image": (U8, [6, 8, 2], _PIXELS[:, :, :2])}, {})],
    "EncodePng": [("RGB", {"image": (U8, [6, 8, 3], _PIXELS)}, {}),
                  ("five channels", {"image": (U8, [2, 2, 5], _PIXELS[:2, :2, :1].repeat(5, 2))}, {})],
    "ResizeBilinear": [
        ("2x2 to 3x4", {"images": (F, [1, 2, 2, 1], [1, 2, 3, 4]), "size": (I32, [2], [3, 4])}, {}),
        ("align corners", {"images": (F, [1, 2, 2, 1], [1, 2, 3, 4]),
                           "size": (I32, [2], [3, 4])}, {"align_corners": True}),
        ("half pixel", {"images": (F, [1, 2, 2, 1], [1, 2, 3, 4]), "size": (I32, [2], [3, 4])},
         {"half_pixel_centers": True}),
    ],
    "ResizeBicubic": [
        ("2x2 to 3x4", {"images": (F, [1, 2, 2, 1], [1, 2, 3, 4]), "size": (I32, [2], [3, 4])}, {}),
        ("align corners", {"images": (F, [1, 2, 2, 1], [1, 2, 3, 4]),
                           "size": (I32, [2], [3, 4])}, {"align_corners": True}),
        ("half pixel", {"images": IMAGE, "size": (I32, [2], [3, 5])},
         {"half_pixel_centers": True}),
    ],
    "ResizeBicubicGrad": [
        ("half pixel", {"grads": (F, [1, 3, 5, 2], None), "original_image": IMAGE},
         {"half_pixel_centers": True}),
    ],
    "ResizeArea": [
        ("2x2 to 3x4", {"images": (F, [1, 2, 2, 1], [1, 2, 3, 4]), "size": (I32, [2], [3, 4])}, {}),
        ("4x4 to 3x2", {"images": IMAGE, "size": (I32, [2], [3, 2])}, {}),
        ("align corners", {"images": IMAGE, "size": (I32, [2], [3, 2])}, {"align_corners": True}),
    ],
    "ResizeNearestNeighbor": [
        ("2x2 to 3x4", {"images": (F, [1, 2, 2, 1], [1, 2, 3, 4]), "size": (I32, [2], [3, 4])}, {}),
        ("half pixel", {"images": (F, [1, 2, 2, 1], [1, 2, 3, 4]), "size": (I32, [2], [3, 4])},
         {"half_pixel_centers": True}),
    ],
    **{f"SparseSegment{r}": [
        ("two segments and an empty one", {"data": SEGMENT_DATA, "indices": (I32, [5], [0, 2, 1, 4, 4]),
                                           "segment_ids": (I32, [5], [0, 0, 2, 2, 2])}, {}),
        ("index out of range", {"data": SEGMENT_DATA, "indices": (I32, [2], [0, 5]),
                                "segment_ids": (I32, [2], [0, 1])}, {}),
        ("ids not sorted", {"data": SEGMENT_DATA, "indices": (I64, [2], [0, 1]),
                            "segment_ids": (I64, [2], [1, 0])}, {}),
    ] for r in ("Sum", "Mean", "SqrtN")},
    **{f"SparseSegment{r}WithNumSegments": [
        ("trailing empty segments", {"data": SEGMENT_DATA, "indices": (I32, [3], [4, 0, 0]),
                                     "segment_ids": (I32, [3], [1, 1, 2]),
                                     "num_segments": (I32, [], 5)}, {}),
        ("id past num_segments", {"data": SEGMENT_DATA, "indices": (I32, [2], [0, 1]),
                                  "segment_ids": (I32, [2], [0, 3]),
                                  "num_segments": (I32, [], 3)}, {}),
    ] for r in ("Sum", "Mean", "SqrtN")},
    **{f"SparseSegment{r}Grad": [
        ("duplicate rows", {"grad": (F, [3, 3], None), "indices": (I32, [5], [0, 2, 1, 4, 4]),
                            "segment_ids": (I32, [5], [0, 0, 2, 2, 2]),
                            "output_dim0": (I32, [], 6)}, {}),
        ("index out of range", {"grad": (F, [2, 3], None), "indices": (I32, [2], [0, 6]),
                                "segment_ids": (I32, [2], [0, 1]),
                                "output_dim0": (I32, [], 6)}, {}),
    ] for r in ("Sum", "Mean", "SqrtN")},
    **{f"SparseSegment{r}GradV2": [
        ("duplicate rows", {"grad": (F, [3, 3], None), "indices": (I32, [5], [4, 2, 1, 4, 2]),
                            "segment_ids": (I32, [5], [0, 0, 2, 2, 2]),
                            "dense_output_dim0": (I32, [], 6)}, {}),
        ("int64 indices", {"grad": (D, [2, 2], None), "indices": (I64, [3], [3, 0, 3]),
                           "segment_ids": (I32, [3], [0, 1, 1]),
                           "dense_output_dim0": (I32, [], 4)}, {}),
        ("index out of range", {"grad": (F, [2, 3], None), "indices": (I32, [2], [0, 6]),
                                "segment_ids": (I32, [2], [0, 1]),
                                "dense_output_dim0": (I32, [], 6)}, {}),
    ] for r in ("Sum", "Mean", "SqrtN")},
    "SparseToDense": [
        ("matrix", {"sparse_indices": (I64, [3, 2], [0, 1, 1, 0, 2, 2]),
                    "output_shape": (I64, [2], [3, 3]), "sparse_values": (F, [3], [5, 6, 7]),
                    "default_value": (F, [], -1)}, {}),
        ("vector, one value", {"sparse_indices": (I32, [2], [1, 3]),
                               "output_shape": (I32, [1], [5]), "sparse_values": (F, [], 2),
                               "default_value": (F, [], 0)}, {}),
        ("out of order", {"sparse_indices": (I64, [2, 2], [1, 0, 0, 1]),
                          "output_shape": (I64, [2], [3, 3]), "sparse_values": (F, [2], [5, 6]),
                          "default_value": (F, [], 0)}, {}),
        ("unvalidated", {"sparse_indices": (I64, [2, 2], [1, 0, 0, 1]),
                         "output_shape": (I64, [2], [3, 3]), "sparse_values": (F, [2], [5, 6]),
                         "default_value": (F, [], 0)}, {"validate_indices": False}),
    ],
    "SparseFillEmptyRows": [
        ("two empty rows", {"indices": (I64, [3, 2], [1, 0, 3, 2, 1, 1]),
                            "values": (F, [3], [10, 20, 30]), "dense_shape": (I64, [2], [5, 3]),
                            "default_value": (F, [], -1)}, {}),
        ("row out of range", {"indices": (I64, [1, 2], [5, 0]), "values": (F, [1], [1]),
                              "dense_shape": (I64, [2], [2, 3]), "default_value": (F, [], -1)}, {}),
    ],
    "RaggedFillEmptyRows": [
        ("unsorted rows, three empty", {"value_rowids": (I64, [4], [2, 0, 0, 4]),
                                        "values": (F, [4], [1, 2, 3, 4]),
                                        "nrows": (I64, [], [6]), "default_value": (F, [], 9)}, {}),
        ("strings", {"value_rowids": (I64, [1], [1]), "values": (STR, [1], [b"x"]),
                     "nrows": (I64, [], [3]), "default_value": (STR, [], [b"d"])}, {}),
        ("row out of range", {"value_rowids": (I64, [2], [0, 7]), "values": (F, [2], [1, 2]),
                              "nrows": (I64, [], [6]), "default_value": (F, [], 9)}, {}),
        ("lengths differ", {"value_rowids": (I64, [2], [0, 1]), "values": (F, [1], [1]),
                            "nrows": (I64, [], [3]), "default_value": (F, [], 9)}, {}),
    ],
    "RaggedFillEmptyRowsGrad": [
        ("four kept", {"reverse_index_map": (I64, [4], [0, 1, 3, 5]),
                       "grad_values": (F, [7], [1, 2, 3, 4, 5, 6, 7])}, {}),
    ],
    "SparseFillEmptyRowsGrad": [
        ("three kept", {"reverse_index_map": (I64, [3], [1, 4, 2]),
                        "grad_values": (F, [6], [1, 2, 3, 4, 5, 6])}, {}),
    ],
    "SparseReshape": [
        ("inferred", {"input_indices": (I64, [3, 2], [0, 1, 1, 2, 2, 0]),
                      "input_shape": (I64, [2], [3, 4]), "new_shape": (I64, [2], [2, -1])}, {}),
        ("rank 3", {"input_indices": (I64, [3, 2], [0, 1, 1, 2, 2, 0]),
                    "input_shape": (I64, [2], [3, 4]), "new_shape": (I64, [3], [2, 2, 3])}, {}),
        ("size mismatch", {"input_indices": (I64, [3, 2], [0, 1, 1, 2, 2, 0]),
                           "input_shape": (I64, [2], [3, 4]), "new_shape": (I64, [2], [5, 3])}, {}),
    ],
    "DataFormatDimMap": [
        ("NHWC to NCHW", {"x": (I32, [6], [0, 1, 2, 3, -1, -4])}, {}),
        ("NDHWC to NCDHW", {"x": (I64, [4], [1, 2, 3, 4])},
         {"src_format": "NDHWC", "dst_format": "NCDHW"}),
        ("not a permutation", {"x": (I32, [1], [1])}, {"dst_format": "NCHWX"}),
    ],
    "DataFormatVecPermute": [
        ("vector", {"x": (I32, [4], [10, 20, 30, 40])}, {}),
        ("rows", {"x": (I64, [4, 2], [1, 2, 3, 4, 5, 6, 7, 8])},
         {"src_format": "NCHW", "dst_format": "NHWC"}),
        ("spatial", {"x": (I32, [2], [20, 30])}, {}),
        ("five", {"x": (I32, [5], [1, 2, 3, 4, 5])}, {"src_format": "NDHWC", "dst_format": "NCDHW"}),
        ("wrong size", {"x": (I32, [3], [1, 2, 3])}, {}),
    ],
    **{op: [
        ("seed 1, 2", {"shape": (I32, [1], [7]), "seed": (I64, [2], [1, 2])}, {"dtype": F}),
        ("int32 seed, double", {"shape": (I64, [2], [2, 3]), "seed": (I32, [2], [-7, 123456])},
         {"dtype": D}),
        ("bad seed", {"shape": (I32, [1], [3]), "seed": (I64, [3], [1, 2, 3])}, {"dtype": F}),
    ] for op in ("StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal")},
    **{op: [
        ("philox", {"shape": (I32, [1], [7]), "key": (U64, [1], [1935571257751224705]),
                    "counter": (U64, [2], [0, 15893885301918257649]), "alg": (I32, [], 1)},
         {"dtype": F}),
        ("auto select, double", {"shape": (I32, [1], [5]), "key": (U64, [1], [12345]),
                                 "counter": (U64, [2], [7, 9]), "alg": (I32, [], 3)}, {"dtype": D}),
        ("threefry", {"shape": (I32, [1], [3]), "key": (U64, [1], [1]),
                      "counter": (U64, [2], [0, 0]), "alg": (I32, [], 2)}, {"dtype": F}),
    ] for op in ("StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2")},
    "StatelessRandomUniformIntV2": [
        ("philox", {"shape": (I32, [1], [5]), "key": (U64, [1], [1935571257751224705]),
                    "counter": (U64, [2], [0, 15893885301918257649]), "alg": (I32, [], 1),
                    "minval": (I32, [], 0), "maxval": (I32, [], 10)}, {}),
        ("uint64", {"shape": (I32, [1], [4]), "key": (U64, [1], [5]), "counter": (U64, [2], [1, 2]),
                    "alg": (I32, [], 1), "minval": (U64, [], 3), "maxval": (U64, [], 1 << 50)}, {}),
    ],
    "StatelessRandomUniformInt": [
        ("int32", {"shape": (I32, [1], [7]), "seed": (I64, [2], [1, 2]),
                   "minval": (I32, [], -5), "maxval": (I32, [], 9)}, {}),
        ("int64 wide", {"shape": (I32, [1], [5]), "seed": (I64, [2], [1, 2]),
                        "minval": (I64, [], -5), "maxval": (I64, [], 1 << 40)}, {}),
        ("empty range", {"shape": (I32, [1], [3]), "seed": (I64, [2], [1, 2]),
                         "minval": (I32, [], 5), "maxval": (I32, [], 5)}, {}),
    ],
    "StatelessRandomGetKeyCounterAlg": [
        ("int64 seed", {"seed": (I64, [2], [0x123456789, -7])}, {}),
    ],
    "StatelessRandomUniformFullInt": [
        ("uint64", {"shape": (I32, [1], [5]), "seed": (I64, [2], [7, 8])}, {"dtype": U64}),
        ("int32, int32 seed", {"shape": (I64, [2], [2, 3]), "seed": (I32, [2], [-7, 9])},
         {"dtype": I32}),
    ],
    "StatelessRandomUniformFullIntV2": [
        ("int64", {"shape": (I32, [1], [5]), "key": (U64, [1], [12345]),
                   "counter": (U64, [2], [7, 9]), "alg": (I32, [], 1)}, {"dtype": I64}),
    ],
    "StatelessRandomGetKeyCounter": [
        ("int64 seed", {"seed": (I64, [2], [0x123456789, -7])}, {}),
        ("int32 seed", {"seed": (I32, [2], [1, 2])}, {}),
    ],
    "StringToHashBucketStrong": [
        ("words", {"input": (STR, [5], [b"hello", b"", b"a", b"Towerflow!!", b"\xff\xfe?>"])},
         {"num_buckets": 1000, "key": [1, 2]}),
        ("2^62 buckets", {"input": (STR, [2], [b"0123456789abcdef", b"exactly8"])},
         {"num_buckets": 1 << 62, "key": [0x0706050403020100, 0x0f0e0d0c0b0a0908]}),
    ],
    "StringToHashBucket": [
        ("words", {"string_tensor": (STR, [5], [b"hello", b"", b"a", b"Towerflow!!", b"\xff\xfe?>"])},
         {"num_buckets": 1000}),
        ("2^62 buckets", {"string_tensor": (STR, [2], [b"0123456789abcdef", b"exactly8"])},
         {"num_buckets": 1 << 62}),
    ],
    "EncodeBase64": [
        ("plain", {"input": (STR, [4], [b"hello", b"", b"\xff\xfe?>", b"Towerflow!!"])}, {}),
        ("padded", {"input": (STR, [2, 2], [b"a", b"ab", b"abc", b"abcd"])}, {"pad": True}),
    ],
    "DecodeBase64": [
        ("with and without padding",
         {"input": (STR, [6], [b"aGVsbG8", b"aGVsbG8=", b"", b"__4_Pg", b"YQ==", b"YR"])}, {}),
        ("bad character", {"input": (STR, [1], [b"a$b"])}, {}),
        ("1 modulo 4", {"input": (STR, [1], [b"abcde"])}, {}),
    ],
    "ReduceJoin": [
        ("rows", {"inputs": (STR, [2, 3], [b"a", b"b", b"c", b"d", b"e", b"f"]),
                  "reduction_indices": (I32, [1], [0])}, {}),
        ("both, listed 0 then 1", {"inputs": (STR, [2, 3], [b"a", b"b", b"c", b"d", b"e", b"f"]),
                                   "reduction_indices": (I32, [2], [0, 1])}, {"separator": ","}),
        ("last, kept", {"inputs": (STR, [2, 3], [b"a", b"b", b"c", b"d", b"e", b"f"]),
                        "reduction_indices": (I32, [1], [-1])}, {"keep_dims": True, "separator": "-"}),
        ("3-D middle then first", {"inputs": (STR, [2, 2, 2], [b"a", b"b", b"c", b"d", b"e", b"f",
                                                               b"g", b"h"]),
                                   "reduction_indices": (I32, [2], [1, 0])}, {"separator": "."}),
        ("none", {"inputs": (STR, [2], [b"a", b"b"]), "reduction_indices": (I32, [0], [])}, {}),
        ("out of range", {"inputs": (STR, [2], [b"a", b"b"]), "reduction_indices": (I32, [1], [1])},
         {}),
    ],
    "StringToHashBucketFast": [
        ("words", {"input": (STR, [5], [b"hello", b"", b"a", b"Towerflow", "\u00fcn\u00efcode".encode()])},
         {"num_buckets": 1000}),
        ("matrix, 7 buckets", {"input": (STR, [2, 2], [b"x", b"y", b"z", b"w"])}, {"num_buckets": 7}),
    ],
    "Bucketize": [
        ("float", {"input": (F, [7], [-5, 0, 1, 2.5, 3, 10, np.nan])}, {"boundaries": [0, 1, 3]}),
        ("int64", {"input": (I64, [5], [-5, 0, 1, 2, 10])}, {"boundaries": [0, 1.5, 3]}),
        ("unsorted boundaries", {"input": (F, [2], [1, 2])}, {"boundaries": [1, 0]}),
    ],
    "Reverse": [
        ("first and last", {"tensor": (F, [2, 3, 2], None), "dims": (B, [3], [True, False, True])},
         {}),
        ("dims too short", {"tensor": (F, [2, 3], None), "dims": (B, [1], [True])}, {}),
    ],
    "SpaceToBatch": [
        ("padded", {"input": (F, [1, 2, 4, 1], None), "paddings": (I32, [2, 2], [0, 0, 1, 1])},
         {"block_size": 2}),
        ("not divisible", {"input": (F, [1, 3, 4, 1], None),
                           "paddings": (I32, [2, 2], [0, 0, 0, 0])}, {"block_size": 2}),
    ],
    "BatchToSpace": [
        ("cropped", {"input": (F, [4, 1, 3, 1], None), "crops": (I32, [2, 2], [0, 0, 1, 1])},
         {"block_size": 2}),
    ],
    "ReverseV2": [
        ("axis 1", {"tensor": (F, [2, 3], None), "axis": (I32, [1], [1])}, {}),
        ("both", {"tensor": (F, [2, 3], None), "axis": (I32, [2], [0, -1])}, {}),
        ("axis out of range", {"tensor": (F, [2, 3], None), "axis": (I32, [1], [2])}, {}),
    ],
    "ScatterNd": [
        ("into 5", {"indices": (I32, [2, 1], [1, 3]), "updates": (F, [2], [9, 10]),
                    "shape": (I32, [1], [5])}, {}),
        ("repeated index adds", {"indices": (I32, [2, 1], [1, 1]), "updates": (F, [2], [9, 10]),
                                 "shape": (I32, [1], [5])}, {}),
        ("out of range", {"indices": (I32, [1, 1], [5]), "updates": (F, [1], [9]),
                          "shape": (I32, [1], [5])}, {}),
    ],
    "SpaceToBatchND": [
        ("2x2", {"input": (F, [1, 4, 4, 1], None), "block_shape": (I32, [2], [2, 2]),
                 "paddings": (I32, [2, 2], [0, 0, 0, 0])}, {}),
        ("padded", {"input": (F, [1, 3, 4, 1], None), "block_shape": (I32, [2], [2, 2]),
                    "paddings": (I32, [2, 2], [1, 0, 0, 0])}, {}),
    ],
    "BatchToSpaceND": [
        ("2x2", {"input": (F, [4, 2, 2, 1], None), "block_shape": (I32, [2], [2, 2]),
                 "crops": (I32, [2, 2], [0, 0, 0, 0])}, {}),
        ("cropped", {"input": (F, [4, 2, 2, 1], None), "block_shape": (I32, [2], [2, 2]),
                     "crops": (I32, [2, 2], [1, 0, 0, 1])}, {}),
    ],
    "StridedSlice": [
        ("strings", {"input": (STR, [2, 3], [b"a", b"b", b"c", b"d", b"e", b"f"]),
                     "begin": (I32, [2], [1, 2]), "end": (I32, [2], [2, 0]),
                     "strides": (I32, [2], [1, -1])},
         {"shrink_axis_mask": 1, "end_mask": 2}),
        ("stride 2", {"input": (F, [3, 4], None), "begin": (I32, [2], [0, 1]),
                      "end": (I32, [2], [3, 4]), "strides": (I32, [2], [2, 1])}, {}),
        ("reversed", {"input": (F, [3, 4], None), "begin": (I32, [2], [-1, -1]),
                      "end": (I32, [2], [0, 0]), "strides": (I32, [2], [-1, -2])},
         {"end_mask": 3}),
        ("shrink", {"input": (F, [3, 4], None), "begin": (I32, [2], [1, 0]),
                    "end": (I32, [2], [2, 4]), "strides": (I32, [2], [1, 1])},
         {"shrink_axis_mask": 1}),
        ("new axis and ellipsis", {"input": (F, [3, 4], None), "begin": (I32, [3], [0, 0, 1]),
                                   "end": (I32, [3], [0, 0, 3]), "strides": (I32, [3], [1, 1, 1])},
         {"new_axis_mask": 1, "ellipsis_mask": 2}),
        ("zero stride", {"input": (F, [3, 4], None), "begin": (I32, [2], [0, 0]),
                         "end": (I32, [2], [3, 4]), "strides": (I32, [2], [1, 0])}, {}),
    ],
    "TopKV2": [
        ("k 2 with ties", {"input": (F, [2, 4], [1, 3, 3, 2, 0, -1, 5, 5]), "k": (I32, [], 2)}, {}),
        ("k too big", {"input": (F, [2, 4], None), "k": (I32, [], 5)}, {}),
        ("int64 k and indices", {"input": (F, [2, 4], [1, 3, 3, 2, 0, -1, 5, 5]),
                                 "k": (I64, [], 3)}, {"index_type": I64}),
    ],
    "TopK": [
        ("k 2 with ties", {"input": (F, [2, 4], [1, 3, 3, 2, 0, -1, 5, 5])}, {"k": 2}),
        ("k too big", {"input": (F, [2, 4], None)}, {"k": 5}),
    ],
    "ConjugateTranspose": [
        ("complex", {"x": (C64, [3, 2], [1 + 2j, 3 - 1j, 1j, 2, 1 + 1j, -1 - 1j]),
                     "perm": (I32, [2], [1, 0])}, {}),
        ("float 3-D", {"x": (F, [2, 3, 4], None), "perm": (I64, [3], [2, 0, 1])}, {}),
        ("bad perm", {"x": (F, [2, 3], None), "perm": (I32, [2], [1, 1])}, {}),
    ],
    **{op: [
        ("rows 0 and 2", {"x": (F, [3, 2], None), "i": (I32, [2], [0, 2]), "v": (F, [2, 2], None)}, {}),
        ("repeated and wrapped", {"x": (I32, [3, 2], None), "i": (I32, [3], [1, 1, -2]),
                                  "v": (I32, [3, 2], None)}, {}),
        ("v too wide", {"x": (F, [3, 2], None), "i": (I32, [1], [1]), "v": (F, [1, 3], None)}, {}),
    ] for op in ("InplaceUpdate", "InplaceAdd", "InplaceSub")},
    "UnravelIndex": [
        ("vector", {"indices": (I32, [3], [22, 41, 37]), "dims": (I32, [2], [7, 6])}, {}),
        ("scalar int64", {"indices": (I64, [], 1621), "dims": (I64, [4], [6, 7, 8, 9])}, {}),
        ("out of bound", {"indices": (I32, [1], [42]), "dims": (I32, [2], [7, 6])}, {}),
    ],
    **{op: [
        ("rows", {"x": (I32, [4, 3], [1, 0, 1, 1, 0, 1, 2, 0, 2, 1, 0, 1]),
                  "axis": (I64, [1], [0])}, {}),
        ("columns, int64 idx", {"x": (F, [4, 3], [1, 0, 1, 1, 0, 1, 2, 0, 2, 1, 0, 1]),
                                "axis": (I32, [1], [-1])}, {"out_idx": I64}),
        ("no axis", {"x": (F, [5], [3, 1, 3, 2, 1]), "axis": (I64, [0], [])}, {}),
        ("axis out of range", {"x": (F, [2, 2], None), "axis": (I64, [1], [2])}, {}),
    ] for op in ("UniqueV2", "UniqueWithCountsV2")},
    "NextAfter": [
        ("float", {"x1": (F, [4], [1, 0, -1, 2]), "x2": (F, [4], [2, -1, -1, np.inf])}, {}),
        ("double, broadcast", {"x1": (D, [2, 2], [1, 0, -3, 1e-300]), "x2": (D, [], 0)}, {}),
    ],
    "ApproximateEqual": [
        ("default tolerance", {"x": (F, [4], [1, 2, 3, np.nan]),
                               "y": (F, [4], [1.000001, 2.1, 3, np.nan])}, {}),
        ("tolerance 0.3", {"x": (D, [2], [1, 2]), "y": (D, [2], [1.5, 2.2])}, {"tolerance": 0.3}),
        ("shapes differ", {"x": (F, [2], [1, 2]), "y": (F, [1], [1.5])}, {}),
    ],
    # Issue 64's last row.
    "Roll": [
        ("one axis", {"input": (F, [3, 4], None), "shift": (I32, [], 1), "axis": (I32, [], 1)}, {}),
        ("two axes", {"input": (F, [3, 4], None), "shift": (I32, [2], [-1, 5]),
                      "axis": (I32, [2], [0, 1])}, {}),
        ("one axis twice", {"input": (I32, [3, 4], None), "shift": (I64, [2], [1, 2]),
                            "axis": (I64, [2], [-1, 1])}, {}),
        ("rank 3", {"input": (D, [2, 3, 2], None), "shift": (I32, [2], [1, -2]),
                    "axis": (I32, [2], [0, 1])}, {}),
        ("sizes differ", {"input": (F, [3, 4], None), "shift": (I32, [2], [1, 2]),
                          "axis": (I32, [1], [1])}, {}),
        ("axis out of range", {"input": (F, [3, 4], None), "shift": (I32, [], 1),
                               "axis": (I32, [], 2)}, {}),
    ],
    "ReverseSequence": [
        ("seq 1 batch 0", {"input": (F, [2, 4, 2], None), "seq_lengths": (I64, [2], [3, 4])},
         {"seq_dim": 1, "batch_dim": 0}),
        ("seq 0 batch 2", {"input": (I32, [3, 2, 4], None),
                           "seq_lengths": (I32, [4], [3, 0, 2, 1])},
         {"seq_dim": 0, "batch_dim": 2}),
        ("length too long", {"input": (F, [2, 3], None), "seq_lengths": (I64, [2], [4, 1])},
         {"seq_dim": 1, "batch_dim": 0}),
        ("negative length", {"input": (F, [2, 3], None), "seq_lengths": (I64, [2], [-1, 1])},
         {"seq_dim": 1, "batch_dim": 0}),
    ],
    "ParallelConcat": [
        ("two rows", {"values": [(F, [1, 3], None), (F, [1, 3], [4, 5, 6])]}, {"shape": [2, 3]}),
        ("three int rows", {"values": [(I32, [1, 2], [1, 2]), (I32, [1, 2], [3, 4]),
                                       (I32, [1, 2], [5, 6])]}, {"shape": [3, 2]}),
    ],
    "AccumulateNV2": [
        ("three", {"inputs": [(F, [2, 3], None), (F, [2, 3], None), (F, [2, 3], [1])]},
         {"shape": [2, 3]}),
        ("int64", {"inputs": [(I64, [4], None), (I64, [4], None)]}, {"shape": [4]}),
    ],
    "BroadcastArgs": [
        ("2x1x3 and 4x1", {"s0": (I32, [3], [2, 1, 3]), "s1": (I32, [2], [4, 1])}, {}),
        ("zero size", {"s0": (I64, [2], [0, 1]), "s1": (I64, [3], [5, 1, 1])}, {}),
        ("incompatible", {"s0": (I32, [2], [2, 3]), "s1": (I32, [2], [4, 1])}, {}),
    ],
    "NthElement": [
        ("n 0", {"input": (F, [2, 4], [5, 1, 3, 3, 2, 8, -1, 0]), "n": (I32, [], 0)}, {}),
        ("n 2", {"input": (D, [2, 4], [5, 1, 3, 3, 2, 8, -1, 0]), "n": (I32, [], 2)}, {}),
        ("reverse", {"input": (I32, [2, 2, 3], None), "n": (I32, [], 1)}, {"reverse": True}),
        ("n too big", {"input": (F, [2, 4], None), "n": (I32, [], 4)}, {}),
    ],
    "HistogramFixedWidth": [
        ("outliers", {"values": (F, [6], [-1, 0, 1.5, 2, 5, 15]), "value_range": (F, [2], [0, 5]),
                      "nbins": (I32, [], 5)}, {}),
        ("int64 counts", {"values": (I32, [2, 2], [-1, 0, 1, 2]),
                          "value_range": (I32, [2], [0, 4]), "nbins": (I32, [], 3)},
         {"dtype": I64}),
        ("infinities", {"values": (D, [3], [np.inf, -np.inf, 2.5]),
                        "value_range": (D, [2], [0, 5]), "nbins": (I32, [], 2)}, {}),
        ("empty range", {"values": (F, [1], [1]), "value_range": (F, [2], [5, 5]),
                         "nbins": (I32, [], 3)}, {}),
    ],
    "Bincount": [
        ("counts", {"arr": (I32, [6], [1, 1, 3, 0, 3, 3]), "size": (I32, [], 5),
                    "weights": (F, [0], [])}, {}),
        ("weights past size", {"arr": (I32, [6], [1, 1, 3, 0, 3, 3]), "size": (I32, [], 3),
                               "weights": (D, [6], [1, 2, 3, 4, 5, 6])}, {}),
        ("negative", {"arr": (I32, [3], [1, -1, 3]), "size": (I32, [], 5),
                      "weights": (I32, [0], [])}, {}),
    ],
    "SparseTensorDenseAdd": [
        ("3x2", {"a_indices": (I64, [2, 2], [0, 1, 2, 0]), "a_values": (F, [2], [10, 20]),
                 "a_shape": (I64, [2], [3, 2]), "b": (F, [3, 2], None)}, {}),
        ("repeated int32", {"a_indices": (I32, [2, 2], [0, 1, 0, 1]),
                            "a_values": (I32, [2], [1, 2]), "a_shape": (I32, [2], [2, 2]),
                            "b": (I32, [2, 2], None)}, {}),
        ("bad index", {"a_indices": (I64, [1, 2], [0, 5]), "a_values": (F, [1], [10]),
                       "a_shape": (I64, [2], [3, 2]), "b": (F, [3, 2], None)}, {}),
        ("shapes differ", {"a_indices": (I64, [2, 2], [0, 1, 2, 0]),
                           "a_values": (F, [2], [10, 20]), "a_shape": (I64, [2], [3, 2]),
                           "b": (F, [3, 3], None)}, {}),
    ],
    "SparseReorder": [
        ("unsorted", _sparse("input_", SP_UNSORTED), {}),
        ("strings", {"input_indices": (I64, [3, 1], [2, 0, 1]),
                     "input_values": (STR, [3], [b"c", b"a", b"b"]),
                     "input_shape": (I64, [1], [3])}, {}),
        ("duplicates", {"input_indices": (I64, [3, 2], [1, 0, 0, 1, 1, 0]),
                        "input_values": (I32, [3], [1, 2, 3]), "input_shape": (I64, [2], [2, 2])},
         {}),
        ("bad rank", {"input_indices": (I64, [1, 2], [0, 0]), "input_values": (F, [1], [1]),
                      "input_shape": (I64, [3], [2, 2, 2])}, {}),
    ],
    "SparseSlice": [
        ("inside", {**_sparse("", SP_A), "start": (I64, [2], [1, 1]),
                    "size": (I64, [2], [2, 3])}, {}),
        ("past the end", {**_sparse("", SP_A), "start": (I64, [2], [2, 3]),
                          "size": (I64, [2], [10, 10])}, {}),
        ("start past the shape", {**_sparse("", SP_A), "start": (I64, [2], [5, 0]),
                                  "size": (I64, [2], [1, 1])}, {}),
        ("negative start, unsorted", {**_sparse("", SP_UNSORTED), "start": (I64, [2], [-1, 0]),
                                      "size": (I64, [2], [3, 4])}, {}),
        ("negative size", {**_sparse("", SP_A), "start": (I64, [2], [0, 0]),
                           "size": (I64, [2], [-1, 2])}, {}),
        ("short start", {**_sparse("", SP_A), "start": (I64, [1], [0]),
                         "size": (I64, [2], [1, 2])}, {}),
    ],
    "SparseSliceGrad": [
        ("two of seven", {"backprop_val_grad": (F, [2], [10, 20]),
                          "input_indices": SP_A["indices"], "input_start": (I64, [2], [1, 1]),
                          "output_indices": (I64, [2, 2], [0, 0, 1, 1])}, {}),
        ("not all used", {"backprop_val_grad": (D, [2], [10, 20]),
                          "input_indices": SP_A["indices"], "input_start": (I64, [2], [1, 1]),
                          "output_indices": (I64, [2, 2], [0, 0, 0, 1])}, {}),
    ],
    "SparseConcat": [
        ("axis 1", {"indices": [SP_A["indices"], SP_UNSORTED["indices"]],
                    "values": [SP_A["values"], SP_UNSORTED["values"]],
                    "shapes": [(I64, [2], [4, 5]), (I64, [2], [4, 5])]}, {"concat_dim": 1}),
        ("axis -2, three", {"indices": [(I64, [2, 2], [0, 0, 1, 2]), (I64, [1, 2], [0, 1]),
                                        (I64, [2, 2], [1, 0, 0, 2])],
                            "values": [(STR, [2], [b"a", b"b"]), (STR, [1], [b"c"]),
                                       (STR, [2], [b"d", b"e"])],
                            "shapes": [(I64, [2], [2, 3]), (I64, [2], [1, 3]),
                                       (I64, [2], [3, 3])]}, {"concat_dim": -2}),
        ("shapes differ", {"indices": [(I64, [1, 2], [0, 0]), (I64, [1, 2], [0, 0])],
                           "values": [(F, [1], [1]), (F, [1], [2])],
                           "shapes": [(I64, [2], [2, 3]), (I64, [2], [2, 2])]},
         {"concat_dim": 0}),
        ("axis out of range", {"indices": [(I64, [1, 2], [0, 0]), (I64, [1, 2], [0, 0])],
                               "values": [(F, [1], [1]), (F, [1], [2])],
                               "shapes": [(I64, [2], [2, 3]), (I64, [2], [2, 3])]},
         {"concat_dim": 2}),
    ],
    "SparseSplit": [
        (f"axis {axis} into {num}", {"split_dim": (I64, [], axis), **_sparse("", SP_A)},
         {"num_split": num})
        for axis, num in [(1, 3), (0, 2), (-1, 2), (0, 4)]
    ] + [
        ("unsorted", {"split_dim": (I64, [], 1), **_sparse("", SP_UNSORTED)}, {"num_split": 2}),
        ("too many", {"split_dim": (I64, [], 0), **_sparse("", SP_A)}, {"num_split": 5}),
        ("out of bounds", {"split_dim": (I64, [], 0), "indices": (I64, [1, 2], [7, 0]),
                           "values": (F, [1], [1]), "shape": (I64, [2], [4, 5])},
         {"num_split": 2}),
    ],
    "SparseSoftmax": [
        ("rows", {"sp_indices": (I64, [6, 2], [0, 0, 0, 2, 1, 1, 1, 2, 1, 3, 2, 0]),
                  "sp_values": (F, [6], [1, 2, 0.5, -1, 3, 7]), "sp_shape": (I64, [2], [3, 4])},
         {}),
        ("rank 3 double", {"sp_indices": (I64, [5, 3], [0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1,
                                                       1, 0, 2]),
                           "sp_values": (D, [5], [1, 2, 3, 4, 5]),
                           "sp_shape": (I64, [3], [2, 2, 3])}, {}),
        ("unsorted", {"sp_indices": SP_UNSORTED["indices"], "sp_values": SP_UNSORTED["values"],
                      "sp_shape": SP_UNSORTED["shape"]}, {}),
        ("rank 1", {"sp_indices": (I64, [2, 1], [0, 1]), "sp_values": (F, [2], [1, 2]),
                    "sp_shape": (I64, [1], [3])}, {}),
    ],
    "SparseAdd": [
        ("thresh 0.1", {**_sparse("a_", SP_A, names=("indices", "values", "shape")),
                        **_sparse("b_", SP_B), "thresh": (F, [], 0.1)}, {}),
        ("thresh 0", {**_sparse("a_", SP_A), **_sparse("b_", SP_B), "thresh": (F, [], 0)}, {}),
        ("unsorted", {**_sparse("a_", SP_UNSORTED), **_sparse("b_", SP_B),
                      "thresh": (F, [], 0)}, {}),
        ("int32", {**_sparse("a_", SP_A, I32), **_sparse("b_", SP_B, I32),
                   "thresh": (I32, [], 3)}, {}),
        ("complex64", {"a_indices": (I64, [2, 1], [0, 1]), "a_values": (C64, [2], [1 + 1j, 2]),
                       "a_shape": (I64, [1], [3]), "b_indices": (I64, [2, 1], [1, 2]),
                       "b_values": (C64, [2], [-2 + 0.5j, 3j]), "b_shape": (I64, [1], [3]),
                       "thresh": (F, [], 0.6)}, {}),
        ("shapes differ", {**_sparse("a_", SP_A), "b_indices": (I64, [1, 2], [0, 0]),
                           "b_values": (F, [1], [1]), "b_shape": (I64, [2], [4, 6]),
                           "thresh": (F, [], 0)}, {}),
    ],
    "SparseAddGrad": [
        ("all kept", {"backprop_val_grad": (F, [9], np.arange(1, 10)),
                      "a_indices": SP_A["indices"], "b_indices": SP_B["indices"],
                      "sum_indices": (I64, [9, 2], [0, 0, 0, 3, 1, 1, 1, 2, 1, 4, 2, 2, 3, 0,
                                                    3, 4, 3, 4])}, {}),
        ("one dropped", {"backprop_val_grad": (D, [8], np.arange(1, 9)),
                         "a_indices": SP_A["indices"], "b_indices": SP_B["indices"],
                         "sum_indices": (I64, [8, 2], [0, 0, 0, 3, 1, 1, 1, 2, 1, 4, 3, 0,
                                                       3, 4, 3, 4])}, {}),
    ],
    **{op: [
        ("sorted", {**_sparse("a_", SP_A), **_sparse("b_", SP_B)}, {}),
        ("int64, unsorted", {**_sparse("a_", SP_UNSORTED, I64), **_sparse("b_", SP_B, I64)}, {}),
        ("out of bounds", {**_sparse("a_", SP_A), "b_indices": (I64, [1, 2], [0, 7]),
                           "b_values": (F, [1], [1]), "b_shape": (I64, [2], [4, 5])}, {}),
    ] for op in ["SparseSparseMaximum", "SparseSparseMinimum"]},
    **{op: [
        ("same shape", {**_sparse("sp_", SP_A), "dense": (F, [4, 5], None)}, {}),
        ("row", {**_sparse("sp_", SP_A), "dense": (F, [5], [2, 4, 8, -1, 0.5])}, {}),
        ("column", {**_sparse("sp_", SP_A), "dense": (F, [4, 1], [2, 4, 8, -1])}, {}),
        ("scalar, int32", {**_sparse("sp_", SP_A, I32), "dense": (I32, [], 3)}, {}),
        ("int32 negatives", {**_sparse("sp_", SP_A, I32), "dense": (I32, [5], [2, -2, 3, -3, 1])},
         {}),
        ("too wide", {**_sparse("sp_", SP_A), "dense": (F, [2, 4, 5], None)}, {}),
        ("out of bounds", {"sp_indices": (I64, [1, 2], [0, 5]), "sp_values": (F, [1], [1]),
                           "sp_shape": (I64, [2], [2, 3]), "dense": (F, [3], [2, 4, 8])}, {}),
    ] for op in ["SparseDenseCwiseAdd", "SparseDenseCwiseMul", "SparseDenseCwiseDiv"]},
    **{op: [
        (f"axes {axes}{' kept' if keep else ''}",
         {"input_indices": (I64, [6, 3], [0, 0, 1, 0, 1, 0, 0, 1, 2, 1, 0, 0, 1, 1, 1, 0, 1, 0]),
          "input_values": (F, [6], [1, -2, 3, -4, 5, 6]), "input_shape": (I64, [3], [2, 2, 3]),
          "reduction_axes": (I32, [len(axes)], axes)}, {"keep_dims": keep})
        for axes, keep in [([1], False), ([1], True), ([0, 2], False), ([0, 2], True),
                           ([-1], False), ([], False), ([0, 1, 2], False), ([0, 1, 2], True),
                           ([3], False)]
    ] for op in ["SparseReduceSumSparse", "SparseReduceMaxSparse"]},
    "SparseMatMul": [
        ("plain", {"a": (F, [2, 3], [1, 0, 2, 0, 0, 3]), "b": (F, [3, 2], None)}, {}),
        ("both transposed, sparse hints", {"a": (F, [3, 2], [1, 0, 0, 0, 2, 3]),
                                           "b": (F, [2, 3], None)},
         {"transpose_a": True, "transpose_b": True, "a_is_sparse": True, "b_is_sparse": True}),
        ("bfloat16 a", {"a": (types_pb2.DT_BFLOAT16, [2, 2], [1.5, 0.1, -2, 0.25]),
                        "b": (F, [2, 3], None)}, {}),
        ("bfloat16 both", {"a": (types_pb2.DT_BFLOAT16, [1, 2], [1.5, 0.1]),
                           "b": (types_pb2.DT_BFLOAT16, [3, 2], [1, 2, 3, 4, 5, 6])},
         {"transpose_b": True}),
        ("sizes differ", {"a": (F, [1, 3], None), "b": (F, [2, 2], None)}, {}),
    ],
    "DecodeRaw": [
        ("float", {"bytes": (STR, [2], [b"\x00\x00\x80\x3f\x00\x00\x00\x40",
                                      b"\x00\x00\x40\x40\x00\x00\x80\x40"])},
         {"out_type": F}),
        ("big-endian int16", {"bytes": (STR, [1, 1], [b"\x01\x02\x03\x04"])},
         {"out_type": types_pb2.DT_INT16, "little_endian": False}),
        ("uint8 of a scalar", {"bytes": (STR, [], [b"abc"])}, {"out_type": U8}),
        ("bool", {"bytes": (STR, [1], [b"\x00\x01\x02"])}, {"out_type": B}),
        ("big-endian complex64", {"bytes": (STR, [1], [b"\x3f\x80\x00\x00\x40\x00\x00\x00"])},
         {"out_type": C64, "little_endian": False}),
        ("bfloat16", {"bytes": (STR, [1], [b"\x80\x3f\x00\xc0"])},
         {"out_type": types_pb2.DT_BFLOAT16}),
        ("empty strings", {"bytes": (STR, [2], [b"", b""])}, {"out_type": D}),
        ("no strings", {"bytes": (STR, [0, 3], [])}, {"out_type": I32}),
        ("not a multiple", {"bytes": (STR, [1], [b"abcde"])}, {"out_type": F}),
        ("lengths differ", {"bytes": (STR, [2], [b"abcd", b"abcdabcd"])}, {"out_type": F}),
    ],
    "DecodePaddedRaw": [
        ("int16", {"input_bytes": (STR, [2], [b"\x01\x00\x02", b"\x03\x00\x04\x00\x05\x00"]),
                   "fixed_length": (I32, [], 4)}, {"out_type": types_pb2.DT_INT16}),
        ("big-endian", {"input_bytes": (STR, [1], [b"\x01\x00\x02"]),
                        "fixed_length": (I32, [], 4)},
         {"out_type": types_pb2.DT_INT16, "little_endian": False}),
        ("float padded", {"input_bytes": (STR, [1], [b"\x00\x00\x80\x3f"]),
                          "fixed_length": (I32, [], 8)}, {"out_type": F}),
        ("uint8 cut", {"input_bytes": (STR, [], [b"abc"]), "fixed_length": (I32, [], 2)},
         {"out_type": U8}),
        ("not a multiple", {"input_bytes": (STR, [1], [b"abc"]), "fixed_length": (I32, [], 3)},
         {"out_type": types_pb2.DT_INT16}),
        ("negative", {"input_bytes": (STR, [1], [b"abc"]), "fixed_length": (I32, [], -2)},
         {"out_type": types_pb2.DT_INT16}),
    ],
    "DecodeCSV": [
        (name, {"records": (STR, [len(records)], records),
                "record_defaults": [(F, [1], [0.5]), (I32, [1], [7]), (STR, [1], [b"x"]),
                                    (D, [1], [1.5]), (I64, [1], [9])]}, attrs)
        for name, records, attrs in [
            ("defaults and spaces", [b"1.5,2,abc,3.25,40", b",,,,", b" 2 , 3 ,  s ,1e3,-5"], {}),
            ("quotes", [b'"1.5","2","a,b""c",3,4', b'"",2,"",3,4'], {}),
            ("na_value", [b"NA,2,NA,3,4"], {"na_value": "NA"}),
            ("delimiter", [b"1|2|x|3|4"], {"field_delim": "|"}),
            ("no quote handling", [b'"1.5",2,x,3,4'], {"use_quote_delim": False}),
            ("too few", [b"1,2,x,3"], {}),
            ("too many", [b"1,2,x,3,4,5"], {}),
            ("bad int32", [b"1,2.5,x,3,4"], {}),
            ("int32 overflow", [b"1,3000000000,x,3,4"], {}),
            ("bad int64", [b"1,2,x,3,99999999999999999999"], {}),
            ("inf, nan, signs", [b"inf,+2,x,-nan,+4", b"1e40,-0,x,.5,007"], {}),
            ("quote unescaped", [b'1,2,"x"y,3,4'], {}),
            ("quote unterminated", [b'1,2,"xy,3,4'], {}),
            ("quote inside", [b'1,2,x"y,3,4'], {}),
            ("CR inside", [b"1,2,x,3,4\r\n"], {}),
        ]
    ] + [
        ("select_cols", {"records": (STR, [2, 1], [b"1,2,3,4,5,6", b"a,b,c,d,,f"]),
                         "record_defaults": [(STR, [0], []), (STR, [1], [b"-"])]},
         {"select_cols": [1, 4]}),
        ("required", {"records": (STR, [1], [b",2"]),
                      "record_defaults": [(F, [0], []), (I32, [], 3)]}, {}),
        ("empty record", {"records": (STR, [1], [b""]), "record_defaults": [(F, [1], [3])]}, {}),
        ("trailing delimiter", {"records": (STR, [1], [b"1,"]),
                                "record_defaults": [(F, [1], [3]), (F, [1], [4])]}, {}),
        ("newline in quotes", {"records": (STR, [1], [b'"a\nb",1']),
                               "record_defaults": [(STR, [1], [b""]), (I32, [1], [0])]}, {}),
        ("two defaults", {"records": (STR, [1], [b"1"]), "record_defaults": [(F, [2], [1, 2])]},
         {}),
        ("select_cols past the fields", {"records": (STR, [1], [b"1,2"]),
                                         "record_defaults": [(F, [1], [3])]},
         {"select_cols": [5]}),
        ("select_cols decreasing", {"records": (STR, [1], [b"1,2"]),
                                    "record_defaults": [(F, [1], [3]), (F, [1], [3])]},
         {"select_cols": [1, 0]}),
    ],
    "SetSize": [
        ("two rows", {"set_indices": (I64, [5, 2], [0, 0, 0, 1, 0, 2, 2, 1, 2, 3]),
                      "set_values": (I64, [5], [5, 5, 6, 1, 1]),
                      "set_shape": (I64, [2], [3, 4])}, {}),
        ("strings, rank 3", {"set_indices": (I64, [3, 3], [0, 1, 0, 1, 0, 0, 1, 0, 1]),
                             "set_values": (STR, [3], [b"a", b"a", b"b"]),
                             "set_shape": (I64, [3], [2, 2, 2])}, {}),
        ("unsorted, not validated", {"set_indices": (I64, [3, 2], [1, 0, 0, 0, 1, 1]),
                                     "set_values": (I32, [3], [1, 2, 3]),
                                     "set_shape": (I64, [2], [3, 3])},
         {"validate_indices": False}),
        ("unsorted", {"set_indices": (I64, [3, 2], [1, 0, 0, 0, 1, 1]),
                      "set_values": (I32, [3], [1, 2, 3]), "set_shape": (I64, [2], [3, 3])}, {}),
        ("rank 1", {"set_indices": (I64, [1, 1], [0]), "set_values": (I32, [1], [1]),
                    "set_shape": (I64, [1], [3])}, {}),
        ("index past its dim", {"set_indices": (I64, [1, 2], [0, 5]),
                                "set_values": (I32, [1], [1]), "set_shape": (I64, [2], [3, 3])},
         {"validate_indices": False}),
    ],
    **{op: [
        (f"{which}, {tag}", inputs, {"set_operation": which})
        for which in ("a-b", "b-a", "intersection", "union")
        for tag, inputs in cases.items()] for op, cases in {
        "DenseToDenseSetOperation": {
            "int32": {"set1": (I32, [2, 4], [1, 2, 2, 5, 3, 3, 3, 3]),
                      "set2": (I32, [2, 4], [2, 7, 1, 1, 4, 3, 9, 0])},
            "strings": {"set1": (STR, [2, 3], [b"b", b"a", b"\xff", b"", b"x", b"x"]),
                        "set2": (STR, [2, 2], [b"a", b"c", b"x", b"y"])},
        },
        "DenseToSparseSetOperation": {
            "int64": {"set1": (I64, [3, 2], [1, 2, 3, 4, 4, 5]),
                      "set2_indices": (I64, [4, 2], [0, 0, 0, 1, 2, 0, 2, 3]),
                      "set2_values": (I64, [4], [2, 9, 4, 4]), "set2_shape": (I64, [2], [3, 4])},
        },
        "SparseToSparseSetOperation": {
            "strings": {"set1_indices": (I64, [4, 2], [0, 0, 0, 1, 1, 0, 3, 2]),
                        "set1_values": (STR, [4], [b"a", b"b", b"c", b"d"]),
                        "set1_shape": (I64, [2], [4, 3]),
                        "set2_indices": (I64, [4, 2], [0, 0, 2, 0, 3, 0, 3, 1]),
                        "set2_values": (STR, [4], [b"b", b"x", b"d", b"e"]),
                        "set2_shape": (I64, [2], [4, 5])},
        },
    }.items()},
    **{op: [(name, {**{k: v for k, v in inputs.items()}, **extra}, attrs)
            for name, inputs, attrs in [
                ("two sparse, two dense", CROSS_IN, {}),
                ("dense only", {**CROSS_IN, "indices": [], "values": [], "shapes": []}, {}),
                ("out of order rows", {**CROSS_IN, "indices": [(I64, [3, 2], [1, 0, 0, 0, 0, 1])],
                                       "values": [CROSS_IN["values"][0]],
                                       "shapes": [CROSS_IN["shapes"][0]]}, {}),
                ("batch mismatch", {**CROSS_IN, "dense_inputs": [(I64, [3, 1], [1, 2, 3])]}, {}),
            ] for extra in [CROSS_EXTRA[op]]] for op in CROSS_EXTRA},
    "SparseCross": [
        (f"{name}, {CROSS_TYPES[out]} from {CROSS_TYPES[internal]}, {buckets} buckets", inputs,
         {"hashed_output": out == I64, "num_buckets": buckets, "hash_key": key,
          "out_type": out, "internal_type": internal})
        for name, inputs in [("two sparse, two dense", CROSS_IN),
                             ("strings", {**CROSS_IN, "indices": CROSS_IN["indices"][:1],
                                          "values": CROSS_IN["values"][:1],
                                          "shapes": CROSS_IN["shapes"][:1],
                                          "dense_inputs": CROSS_IN["dense_inputs"][:1]})]
        for out, internal, buckets, key in [(STR, I64, 0, 0), (I64, I64, 0, 956888297470),
                                            (I64, I64, 100, -5), (I64, STR, 10, 1)]],
    # Files both read where they lie: this script and its directory.
    "ReadFile": [("this script", {"filename": (STR, [], [os.path.abspath(__file__).encode()])},
                  {})],
    "MatchingFiles": [
        ("this directory", {"pattern": (STR, [2], [
            os.path.join(os.path.dirname(os.path.abspath(__file__)), p).encode()
            for p in ("*.py", "[a-o]*")])}, {})],
    "ParseTensor": [
        (name, {"serialized": (STR, [], [tf.io.serialize_tensor(value).numpy()])},
         {"out_type": out})
        for name, value, out in [
            ("float matrix", np.array([[1.5, -2], [3, 4]], np.float32), F),
            ("strings", np.array([b"a", b""]), STR),
            ("int64 as double", np.array([7], np.int64), D)]],
    "TensorSummaryV2": [
        ("text plugin", {"tag": (STR, [], [b"t"]), "tensor": (F, [2], [1.5, 2]),
                         "serialized_summary_metadata": (STR, [], [b"\x12\x04text"])}, {}),
        ("strings, no metadata", {"tag": (STR, [], [b"t"]), "tensor": (STR, [1], [b"x"]),
                                  "serialized_summary_metadata": (STR, [], [b""])}, {}),
    ],
    "UnsortedSegmentJoin": [
        ("rows", {"inputs": (STR, [3, 2], [b"a", b"b", b"c", b"d", b"e", b"f"]),
                  "segment_ids": (I32, [3], [1, 1, 0]), "num_segments": (I32, [], [2])},
         {"separator": "-"}),
        ("empty strings", {"inputs": (STR, [4], [b"", b"x", b"y", b""]),
                           "segment_ids": (I64, [4], [0, 0, 1, 1]),
                           "num_segments": (I64, [], [3])}, {"separator": ":"}),
        ("negative id", {"inputs": (STR, [2], [b"a", b"b"]), "segment_ids": (I32, [2], [0, -1]),
                         "num_segments": (I32, [], [2])}, {}),
    ],
    "ScatterNdNonAliasingAdd": [
        (f"{name}", {"input": (dtype, [4], [1, 2, 3, 4]), "indices": (I32, [3, 1], [1, 3, 1]),
                     "updates": (dtype, [3], [10, 20, 30])}, {})
        for name, dtype in [("float", F), ("int64", I64), ("double", D)]] + [
        ("bool", {"input": (B, [2], [True, False]), "indices": (I64, [1, 1], [1]),
                  "updates": (B, [1], [True])}, {}),
        ("out of range", {"input": (F, [4], [1, 2, 3, 4]), "indices": (I32, [2, 1], [1, 4]),
                          "updates": (F, [2], [10, 20])}, {}),
    ],
    "EditDistance": [
        (name, {"hypothesis_indices": (I64, [len(hi) // len(hs), len(hs)], hi),
                "hypothesis_values": (dtype, [len(hv)], hv), "hypothesis_shape": (I64, [len(hs)], hs),
                "truth_indices": (I64, [len(ti) // len(ts), len(ts)], ti),
                "truth_values": (dtype, [len(tv)], tv), "truth_shape": (I64, [len(ts)], ts)},
         {"normalize": normalize})
        for name, dtype, hi, hv, hs, ti, tv, ts, normalize in [
            ("strings", STR, [0, 0, 0, 1, 1, 0], [b"a", b"b", b"c"], [2, 2],
             [0, 0, 1, 0, 1, 1], [b"a", b"d", b"c"], [2, 2], True),
            ("strings, not normalized", STR, [0, 0, 0, 1, 1, 0], [b"a", b"b", b"c"], [2, 2],
             [0, 0, 1, 0, 1, 1], [b"a", b"d", b"c"], [2, 2], False),
            ("rank 3, missing rows", I32, [0, 0, 0, 0, 0, 1, 1, 0, 0], [1, 2, 3], [2, 1, 2],
             [0, 0, 0, 1, 1, 0], [1, 4], [2, 2, 1], True),
            ("shapes differ", I32, [0, 0], [1], [1, 3], [2, 0], [1], [3, 1], True),
            ("unsorted runs", I32, [1, 0, 0, 0, 1, 1], [1, 2, 3], [2, 2], [0, 0, 1, 0], [2, 1],
             [2, 2], False),
            ("float words", F, [0, 0, 0, 1, 0, 2, 0, 3], [1, 2, 3, 4], [1, 4],
             [0, 0, 0, 1, 0, 2], [1, 3, 4], [1, 4], True),
            ("ranks differ", I32, [0, 0], [1], [1, 2], [0, 0, 0], [1], [1, 2, 1], True),
            ("rank 1", I32, [0], [1], [2], [1], [1], [2], True),
            ("position past the output", I32, [3, 0], [1], [1, 2], [0, 0], [1], [1, 2], True),
        ]
    ],
    "StringNGrams": [
        (name, {"data": (STR, [len(data)], data), "data_splits": (stype, [len(splits)], splits)},
         {"separator": sep, "ngram_widths": widths, "left_pad": "<", "right_pad": ">",
          "pad_width": pad, "preserve_short_sequences": short})
        for name, data, splits, widths, pad, short, sep, stype in [
            ("bigrams", [b"a", b"b", b"c", b"d", b"e"], [0, 3, 5], [2], 0, False, " ", I64),
            ("two widths", [b"a", b"b", b"c", b"d", b"e"], [0, 3, 5], [2, 3], 0, False, " ", I64),
            ("padded", [b"a", b"b", b"c", b"d", b"e"], [0, 3, 5], [3], -1, False, "_", I64),
            ("pad 1", [b"a", b"b", b"c", b"d", b"e"], [0, 3, 5], [3], 1, False, " ", I32),
            ("short kept", [b"a", b"b", b"c", b"d", b"e"], [0, 1, 5], [4], 1, True, " ", I64),
            ("empty row", [b"a", b"b", b"c", b"d", b"e"], [0, 0, 5], [2], 0, True, "", I64),
            ("no widths", [b"a", b"b", b"c"], [0, 3], [], 1, True, " ", I64),
            ("no splits", [b"a", b"b"], [], [2], 0, False, " ", I64),
            ("bad first split", [b"a", b"b"], [1, 2], [2], 0, False, " ", I64),
            ("bad split", [b"a", b"b"], [0, 3, 2], [2], 0, False, " ", I64),
            ("zero width", [b"a", b"b"], [0, 2], [0], 0, False, " ", I64),
        ]
    ],
    "Fingerprint": [
        ("strings", {"data": (STR, [2], [b"a", b"hello"]), "method": _bytes(b"farmhash64")}, {}),
        ("string rows", {"data": (STR, [2, 2], [b"a", b"b", b"c", b"d"]),
                         "method": _bytes(b"farmhash64")}, {}),
        ("int32 rows", {"data": (I32, [2, 2], [1, 2, 3, 4]), "method": _bytes(b"farmhash64")}, {}),
        ("float", {"data": (F, [1], [1.5]), "method": _bytes(b"farmhash64")}, {}),
        ("bool", {"data": (B, [2], [True, False]), "method": _bytes(b"farmhash64")}, {}),
        ("empty rows", {"data": (F, [2, 0], []), "method": _bytes(b"farmhash64")}, {}),
        ("no rows", {"data": (F, [0, 3], []), "method": _bytes(b"farmhash64")}, {}),
        ("scalar", {"data": (F, [], 1.5), "method": _bytes(b"farmhash64")}, {}),
        ("md5", {"data": (F, [1], [1.5]), "method": _bytes(b"md5")}, {}),
    ],
    "RaggedRange": [
        ("int rows", {"starts": (I32, [3], [2, 5, 8]), "limits": (I32, [3], [3, 5, 12]),
                      "deltas": (I32, [], 1)}, {}),
        ("negative deltas", {"starts": (I64, [], 0), "limits": (I64, [3], [3, 5, -2]),
                             "deltas": (I64, [3], [1, 2, -1])}, {"Tsplits": I32}),
        ("floats", {"starts": (F, [2], [0.5, -3]), "limits": (F, [2], [-2.5, 0]),
                    "deltas": (F, [2], [-1.5, 0.75])}, {}),
        ("zero delta", {"starts": (I32, [1], [0]), "limits": (I32, [], 3),
                        "deltas": (I32, [], 0)}, {}),
    ],
    "LinSpace": [
        ("3 values", {"start": (F, [], 10), "stop": (F, [], 12), "num": (I32, [], 3)}, {}),
        ("descending", {"start": (F, [], 1), "stop": (F, [], 0), "num": (I32, [], 4)}, {}),
        ("float rounding", {"start": (F, [], -1), "stop": (F, [], 1), "num": (I32, [], 6)}, {}),
        ("double", {"start": (D, [], 0), "stop": (D, [], 1), "num": (I64, [], 7)}, {}),
        ("num 0", {"start": (F, [], 1), "stop": (F, [], 5), "num": (I32, [], 0)}, {}),
    ],
    # Fake quantisation: a spread of inputs against several ranges.
    **{op: [
        ("own range, 4 bits", {"input": QUANT_IN, "input_min": (F, [], 0), "input_max": (F, [], 0)},
         {"num_bits": 4}),
        ("given range", {"input": QUANT_IN, "input_min": (F, [], -1.3), "input_max": (F, [], 2.9)},
         {"range_given": True, "num_bits": 5}),
        ("unsigned, narrow, half up", {"input": QUANT_IN, "input_min": (F, [], 0),
                                       "input_max": (F, [], 6)},
         {"range_given": True, "signed_input": False, "narrow_range": True, "round_mode": "HALF_UP"}),
        ("per row", {"input": QUANT_IN, "input_min": (F, [4], [0, 0, 0, 0]),
                     "input_max": (F, [4], [0, 0, 0, 0])}, {"axis": 0, "num_bits": 3}),
        ("double", {"input": (D, [5], [0.3, 1.2, -2.0, 7.5, -0.01]), "input_min": (D, [], 0),
                    "input_max": (D, [], 0)}, {"num_bits": 3}),
        ("min above max", {"input": QUANT_IN, "input_min": (F, [], 2), "input_max": (F, [], 1)},
         {"range_given": True}),
    ] for op in ("QuantizeAndDequantizeV2", "QuantizeAndDequantizeV4")},
    # QuantizeV2 and Dequantize: each quantized type in each mode, the
    # range widened, per-axis ranges, rounding, special values.
    "QuantizeV2": [
        (f"{types_pb2.DataType.Name(t)[3:].lower()} {mode.lower()}{' narrow' if narrow else ''}",
         {"input": (F, [12], [-1, -0.5, 0, 0.3, 1, 2, 5.5, -3, 0.1234567, 1.5, np.nan, -np.inf]),
          "min_range": (F, [], -1), "max_range": (F, [], 2)},
         {"T": t, "mode": mode, "narrow_range": narrow})
        for t in (types_pb2.DT_QUINT8, types_pb2.DT_QINT8, types_pb2.DT_QUINT16,
                  types_pb2.DT_QINT16, types_pb2.DT_QINT32)
        for mode, narrow in (("MIN_COMBINED", False), ("MIN_FIRST", False), ("SCALED", False),
                             ("SCALED", True))
    ] + [
        ("half to even", {"input": (F, [6], [0.5, 1.5, 2.5, -0.5, -2.5, 126.5]),
                          "min_range": (F, [], -128), "max_range": (F, [], 127)},
         {"T": types_pb2.DT_QINT8, "mode": "SCALED", "round_mode": "HALF_TO_EVEN"}),
        ("empty range widened", {"input": (F, [3], [0, 0.001, 0.5]), "min_range": (F, [], 0),
                                 "max_range": (F, [], 0)},
         {"T": types_pb2.DT_QINT8, "ensure_minimum_range": 0.5}),
        ("per column", {"input": (F, [2, 3], [-1, 0.5, 2, 0.25, -4, 1]),
                        "min_range": (F, [3], [-1, -4, -2]), "max_range": (F, [3], [2, 1, 1])},
         {"T": types_pb2.DT_QINT8, "mode": "SCALED", "axis": 1}),
        ("per row", {"input": (F, [2, 3], [-1, 0.5, 2, 0.25, -4, 1]),
                     "min_range": (F, [2], [-1, -4]), "max_range": (F, [2], [2, 1])},
         {"T": types_pb2.DT_QUINT8, "axis": 0}),
        ("max below min", {"input": (F, [3], [0, 1, 2]), "min_range": (F, [], 2),
                           "max_range": (F, [], 1)}, {"T": types_pb2.DT_QUINT8}),
        ("per column, min first", {"input": (F, [2, 3], [-1, 0.5, 2, 0.25, -4, 1]),
                                   "min_range": (F, [3], [-1, -4, -2]),
                                   "max_range": (F, [3], [2, 1, 1])},
         {"T": types_pb2.DT_QUINT8, "mode": "MIN_FIRST", "axis": 1}),
    ],
    "Dequantize": [
        (f"{types_pb2.DataType.Name(t)[3:].lower()} {mode.lower()}",
         {"input": (t, [6], vals), "min_range": (F, [], -1.5), "max_range": (F, [], 2.25)},
         {"mode": mode})
        for t, vals in ((types_pb2.DT_QUINT8, [0, 1, 85, 128, 200, 255]),
                        (types_pb2.DT_QINT8, [-128, -127, -1, 0, 64, 127]),
                        (types_pb2.DT_QUINT16, [0, 1, 32768, 65535, 7, 9]),
                        (types_pb2.DT_QINT16, [-32768, -32767, 0, 12345, 32767, 5]),
                        (types_pb2.DT_QINT32, [-2147483648, -5, 7, 1073741824, 2147483583,
                                               2147483584]))
        for mode in ("MIN_COMBINED", "MIN_FIRST", "SCALED")
    ] + [
        ("bfloat16", {"input": (types_pb2.DT_QUINT8, [5], [0, 1, 85, 200, 255]),
                      "min_range": (F, [], -1.5), "max_range": (F, [], 2.25)},
         {"dtype": types_pb2.DT_BFLOAT16}),
        ("bfloat16 scaled", {"input": (types_pb2.DT_QUINT8, [5], [0, 1, 85, 200, 255]),
                             "min_range": (F, [], -1.5), "max_range": (F, [], 2.25)},
         {"dtype": types_pb2.DT_BFLOAT16, "mode": "SCALED"}),
        ("per column", {"input": (types_pb2.DT_QUINT8, [2, 3], [0, 1, 85, 128, 200, 255]),
                        "min_range": (F, [3], [-1, 0, 2]), "max_range": (F, [3], [1, 4, 3])},
         {"axis": 1}),
        ("per row scaled", {"input": (types_pb2.DT_QINT8, [2, 3], [-128, -1, 0, 1, 64, 127]),
                            "min_range": (F, [2], [-1, -2]), "max_range": (F, [2], [1, 4])},
         {"axis": 0, "mode": "SCALED"}),
        ("min first zero range", {"input": (types_pb2.DT_QUINT8, [3], [0, 1, 255]),
                                  "min_range": (F, [], 0.5), "max_range": (F, [], 0.5)},
         {"mode": "MIN_FIRST"}),
        ("axis past the rank", {"input": (types_pb2.DT_QUINT8, [2, 3], [0, 1, 85, 128, 200, 255]),
                                "min_range": (F, [1], [-1]), "max_range": (F, [1], [1])},
         {"axis": 2}),
    ],
    # TF 1's eight-bit inference ops (the kernels TF registers): zero
    # points inside and outside the types, reversed ranges, the fixed-point
    # requantisation, SAME windows of a stride longer than the filter.
    "QuantizedConv2D": [
        (f"{name} {padding.lower()}",
         {"input": (QU8, [1, 6, 6, 2], Q_IMAGE), "filter": (QU8, [2, 2, 2, 3], Q_FILTER),
          "min_input": (F, [], lo), "max_input": (F, [], 2), "min_filter": (F, [], flo),
          "max_filter": (F, [], fhi)},
         {"strides": [1, stride, stride, 1], "padding": padding})
        for name, lo, flo, fhi, stride in (("stride 1", -1, -0.5, 1.5, 1),
                                           ("stride 3", -1, -0.5, 1.5, 3),
                                           ("no zero in the input range", 0.5, -0.5, 1.5, 2),
                                           ("filter zero above quint8", -1, -3, -1.5, 1))
        for padding in ("SAME", "VALID")
    ] + [
        ("depths differ", {"input": (QU8, [1, 6, 6, 2], Q_IMAGE),
                           "filter": (QU8, [2, 2, 3, 2], Q_FILTER[:24]),
                           "min_input": (F, [], -1), "max_input": (F, [], 2),
                           "min_filter": (F, [], -1), "max_filter": (F, [], 1)},
         {"strides": [1, 1, 1, 1], "padding": "SAME"}),
    ],
    "QuantizedMatMul": [
        (f"transpose {ta:d}{tb:d}",
         {"a": (QU8, [3, 4] if ta else [4, 3], Q_IMAGE[:12]),
          "b": (QU8, [5, 3] if tb else [3, 5], Q_FILTER[:15]),
          "min_a": (F, [], -1), "max_a": (F, [], 2), "min_b": (F, [], -0.5),
          "max_b": (F, [], 1.5)}, {"transpose_a": ta, "transpose_b": tb})
        for ta in (False, True) for tb in (False, True)
    ] + [
        ("empty range", {"a": (QU8, [4, 3], Q_IMAGE[:12]), "b": (QU8, [3, 5], Q_FILTER[:15]),
                         "min_a": (F, [], 1), "max_a": (F, [], 1), "min_b": (F, [], -0.5),
                         "max_b": (F, [], 1.5)}, {}),
    ],
    **{op: [
        (name, {"x": x, "y": y, "min_x": (F, [], xr[0]), "max_x": (F, [], xr[1]),
                "min_y": (F, [], yr[0]), "max_y": (F, [], yr[1])}, {})
        for name, x, y, xr, yr in (
            ("same shape", (QU8, [2, 6], Q_IMAGE[:12]), (QU8, [2, 6], Q_FILTER[:12]), (-1, 2),
             (-0.5, 0.25)),
            ("row", (QU8, [4, 3], Q_IMAGE[:12]), (QU8, [3], Q_FILTER[:3]), (-1, 2), (-0.5, 0.25)),
            ("row first", (QU8, [3], Q_FILTER[:3]), (QU8, [4, 3], Q_IMAGE[:12]), (-0.5, 0.25),
             (-1, 2)),
            ("scalar", (QU8, [4, 3], Q_IMAGE[:12]), (QU8, [], [200]), (-1, 2), (-3, 0.5)),
            ("scalar first", (QU8, [1], [9]), (QU8, [4, 3], Q_IMAGE[:12]), (0.5, 3), (-1, 2)),
            ("wide ranges", (QU8, [4, 3], Q_IMAGE[:12]), (QU8, [3], Q_FILTER[:3]), (-100, 20),
             (-0.001, 0.002)),
            ("empty y range", (QU8, [4, 3], Q_IMAGE[:12]), (QU8, [3], Q_FILTER[:3]), (-1, 2),
             (0.5, 0.25)),
            ("shapes differ", (QU8, [4, 3], Q_IMAGE[:12]), (QU8, [2], Q_FILTER[:2]), (-1, 2),
             (-0.5, 0.25)))
    ] for op in ("QuantizedAdd", "QuantizedMul")},
    "QuantizedBatchNormWithGlobalNormalization": [
        (f"{'scaled' if scaled else 'unscaled'} [{lo}, {hi}]",
         {"t": (QU8, [2, 3, 2, 4], Q_IMAGE[:48]), "t_min": (F, [], lo), "t_max": (F, [], hi),
          "m": (QU8, [4], Q_FILTER[:4]), "m_min": (F, [], -0.5), "m_max": (F, [], 1),
          "v": (QU8, [4], Q_FILTER[4:8]), "v_min": (F, [], 0), "v_max": (F, [], v_max),
          "beta": (QU8, [4], Q_FILTER[8:12]), "beta_min": (F, [], -1), "beta_max": (F, [], 1),
          "gamma": (QU8, [4], Q_FILTER[12:16]), "gamma_min": (F, [], 0),
          "gamma_max": (F, [], 2)},
         {"out_type": types_pb2.DT_QINT32, "variance_epsilon": 0.001,
          "scale_after_normalization": scaled})
        for scaled in (True, False) for lo, hi, v_max in ((-1, 2, 3), (-100, 200, 0.01))
    ],
    "QuantizedResizeBilinear": [
        (f"{types_pb2.DataType.Name(t)[3:].lower()} {size} corners {ac:d} half {hp:d}",
         {"images": (t, [1, 6, 6, 2], vals), "size": (I32, [2], size), "min": (F, [], -1),
          "max": (F, [], 2)}, {"align_corners": ac, "half_pixel_centers": hp})
        for t, vals in ((QU8, Q_IMAGE),
                        (types_pb2.DT_QINT32, [(v - 128) * 16777215 for v in Q_IMAGE]))
        for size in ([9, 13], [4, 3], [6, 6])
        for ac, hp in ((False, False), (True, False), (False, True))
    ],
    "QuantizedBiasAdd": [
        (f"{types_pb2.DataType.Name(t)[3:].lower()}",
         {"input": (t, [4, 3], vals), "bias": (t, [3], vals[5:8]), "min_input": (F, [], -1),
          "max_input": (F, [], 2), "min_bias": (F, [], -0.5), "max_bias": (F, [], 0.25)},
         {"out_type": types_pb2.DT_QINT32})
        for t, vals in ((QU8, Q_IMAGE[:12]), (types_pb2.DT_QINT8, [v - 128 for v in Q_IMAGE[:12]]))
    ],
    **{op: [
        (f"{types_pb2.DataType.Name(t)[3:].lower()} [{lo}, {hi}]",
         {"features": (t, [6], vals), "min_features": (F, [], lo), "max_features": (F, [], hi)},
         {"out_type": t})
        for t, vals in ((QU8, [0, 100, 128, 200, 255, 31]),
                        (types_pb2.DT_QINT32, [-5, 0, 7, -2147483648, 2147483647, 90000000]))
        for lo, hi in ((-1, 1), (-2, 10), (0.5, 1))
    ] for op in ("QuantizedRelu", "QuantizedRelu6")},
    **{op: [
        (f"{types_pb2.DataType.Name(t)[3:].lower()} {padding.lower()} {k}x{k} stride {s}",
         {"input": (t, [1, 6, 6, 2], vals), "min_input": (F, [], -1), "max_input": (F, [], 3)},
         {"ksize": [1, k, k, 1], "strides": [1, s, s, 1], "padding": padding})
        for t, vals in ((QU8, Q_IMAGE), (types_pb2.DT_QINT8, [v - 128 for v in Q_IMAGE]))
        for padding in ("SAME", "VALID") for k, s in ((2, 2), (3, 1), (3, 2))
    ] for op in ("QuantizedMaxPool", "QuantizedAvgPool")},
    "QuantizedConcat": [
        ("quint8 axis 1", {"concat_dim": (I32, [], 1),
                           "values": [(QU8, [2, 2], [0, 255, 128, 7]), (QU8, [2, 1], [1, 254])],
                           "input_mins": [(F, [], -1), (F, [], 0.5)],
                           "input_maxes": [(F, [], 1), (F, [], 3)]}, {}),
        ("qint32 symmetric", {"concat_dim": (I32, [], 0),
                              "values": [(types_pb2.DT_QINT32, [3], [-2147483648, 0, 2147483647]),
                                         (types_pb2.DT_QINT32, [2], [1000, -1000000000])],
                              "input_mins": [(F, [], -1), (F, [], -5)],
                              "input_maxes": [(F, [], 1), (F, [], 3)]}, {}),
        ("same ranges", {"concat_dim": (I32, [], 0),
                         "values": [(QU8, [2], [3, 4]), (QU8, [1], [5])],
                         "input_mins": [(F, [], -1), (F, [], -1)],
                         "input_maxes": [(F, [], 1), (F, [], 1)]}, {}),
        ("dimensions differ", {"concat_dim": (I32, [], 0),
                               "values": [(QU8, [1, 2], [3, 4]), (QU8, [1, 1], [5])],
                               "input_mins": [(F, [], -1), (F, [], -1)],
                               "input_maxes": [(F, [], 1), (F, [], 1)]}, {}),
    ],
    "QuantizedReshape": [
        (f"{types_pb2.DataType.Name(t)[3:].lower()}",
         {"tensor": (t, [6], [1, 2, 3, 4, 5, 6]), "shape": (I32, [2], [3, -1]),
          "input_min": (F, [], -1), "input_max": (F, [], 1)}, {})
        for t in (QU8, types_pb2.DT_QINT32)
    ],
    "RequantizationRange": [
        ("wide", {"input": Q_WIDE, "input_min": (F, [], -8), "input_max": (F, [], 8)}, {}),
        ("above zero", {"input": (types_pb2.DT_QINT32, [2], [100000, 2000000]),
                        "input_min": (F, [], -8), "input_max": (F, [], 8)}, {}),
    ],
    "Requantize": [
        (f"{types_pb2.DataType.Name(t)[3:].lower()} [{lo}, {hi}]",
         {"input": Q_WIDE, "input_min": (F, [], -10), "input_max": (F, [], 10),
          "requested_output_min": (F, [], lo), "requested_output_max": (F, [], hi)},
         {"out_type": t})
        for t in (QU8, types_pb2.DT_QINT8)
        for lo, hi in ((-3, 5), (0, 0), (-1, -0.5), (0.5, 2))
    ],
    "QuantizeDownAndShrinkRange": [
        ("wide", {"input": Q_WIDE, "input_min": (F, [], -8), "input_max": (F, [], 8)},
         {"out_type": QU8}),
        ("small", {"input": (types_pb2.DT_QINT32, [4], [-300000, 70000, 1234567, -5]),
                   "input_min": (F, [], -50), "input_max": (F, [], 50)}, {"out_type": QU8}),
    ],
    "QuantizeAndDequantizeV3": [
        ("given, 5 bits", {"input": QUANT_IN, "input_min": (F, [], -1.3), "input_max": (F, [], 2.9),
                           "num_bits": (I32, [], 5)}, {}),
        ("own range", {"input": QUANT_IN, "input_min": (F, [], 0), "input_max": (F, [], 0),
                       "num_bits": (I32, [], 6)}, {"range_given": False}),
        ("bits 0", {"input": QUANT_IN, "input_min": (F, [], 0), "input_max": (F, [], 0),
                    "num_bits": (I32, [], 0)}, {}),
    ],
    "QuantizeAndDequantizeV4Grad": [
        ("scalar range", {"gradients": (F, [4, 8], None), "input": QUANT_IN,
                          "input_min": (F, [], -1.3), "input_max": (F, [], 2.9)}, {}),
        ("per column", {"gradients": (F, [4, 8], None), "input": QUANT_IN,
                        "input_min": (F, [8], np.linspace(-9, 1, 8)),
                        "input_max": (F, [8], np.linspace(-1, 9, 8))}, {"axis": 1}),
    ],
    "Dilation2D": [
        ("valid", {"input": DIL_IN, "filter": DIL_FILTER},
         {"strides": [1, 1, 1, 1], "rates": [1, 1, 1, 1], "padding": "VALID"}),
        ("same, stride 2, rate 2", {"input": DIL_IN, "filter": DIL_FILTER},
         {"strides": [1, 2, 2, 1], "rates": [1, 2, 2, 1], "padding": "SAME"}),
        ("int32, rows 2 cols 1", {"input": (I32, [1, 5, 5, 2], (DIL_IN[2] * 10).astype(np.int32)),
                                  "filter": (I32, [2, 2, 2], (DIL_FILTER[2] * 10).astype(np.int32))},
         {"strides": [1, 2, 1, 1], "rates": [1, 1, 2, 1], "padding": "SAME"}),
        ("filter larger than input", {"input": DIL_IN, "filter": (F, [6, 6, 2], None)},
         {"strides": [1, 1, 1, 1], "rates": [1, 1, 1, 1], "padding": "VALID"}),
        ("depths differ", {"input": DIL_IN, "filter": (F, [2, 2, 1], None)},
         {"strides": [1, 1, 1, 1], "rates": [1, 1, 1, 1], "padding": "VALID"}),
    ],
    **{op: [
        ("valid", {"input": DIL_IN, "filter": DIL_FILTER, "out_backprop": (F, [1, 4, 4, 2], None)},
         {"strides": [1, 1, 1, 1], "rates": [1, 1, 1, 1], "padding": "VALID"}),
        ("same, stride 2, rate 2", {"input": DIL_IN, "filter": DIL_FILTER,
                                    "out_backprop": (F, [1, 3, 3, 2], None)},
         {"strides": [1, 2, 2, 1], "rates": [1, 2, 2, 1], "padding": "SAME"}),
        ("wrong out_backprop", {"input": DIL_IN, "filter": DIL_FILTER,
                                "out_backprop": (F, [1, 3, 4, 2], None)},
         {"strides": [1, 1, 1, 1], "rates": [1, 1, 1, 1], "padding": "VALID"}),
    ] for op in ("Dilation2DBackpropInput", "Dilation2DBackpropFilter")},
    "CTCLoss": [
        ("merge repeated", {"inputs": CTC_LOGITS, "labels_indices": CTC_INDICES,
                            "labels_values": (I32, [4], [1, 1, 2, 0]),
                            "sequence_length": (I32, [2], [5, 3])}, {}, {"compare": 2}),
        ("no merging", {"inputs": CTC_LOGITS, "labels_indices": CTC_INDICES,
                        "labels_values": (I32, [4], [1, 1, 2, 0]),
                        "sequence_length": (I32, [2], [5, 3])}, {"ctc_merge_repeated": False},
         {"compare": 2}),
        ("collapse, double", {"inputs": (D, [5, 2, 4], CTC_LOGITS[2]), "labels_indices": CTC_INDICES,
                              "labels_values": (I32, [4], [1, 1, 2, 0]),
                              "sequence_length": (I32, [2], [5, 3])},
         {"preprocess_collapse_repeated": True}, {"compare": 2}),
        ("no path, padded label", {"inputs": CTC_LOGITS, "labels_indices": CTC_INDICES,
                                   "labels_values": (I32, [4], [1, 3, 0, 0]),
                                   "sequence_length": (I32, [2], [5, 2])}, {}, {"compare": 2}),
        ("too long, ignored", {"inputs": CTC_LOGITS, "labels_indices": CTC_INDICES,
                               "labels_values": (I32, [4], [1, 1, 2, 0]),
                               "sequence_length": (I32, [2], [5, 1])},
         {"ignore_longer_outputs_than_inputs": True}, {"compare": 2}),
        ("too long", {"inputs": CTC_LOGITS, "labels_indices": CTC_INDICES,
                      "labels_values": (I32, [4], [1, 1, 2, 0]),
                      "sequence_length": (I32, [2], [5, 1])}, {}),
        ("label after the blank", {"inputs": CTC_LOGITS, "labels_indices": CTC_INDICES,
                                   "labels_values": (I32, [4], [3, 1, 2, 0]),
                                   "sequence_length": (I32, [2], [5, 3])}, {}),
    ],
    "CTCBeamSearchDecoder": [
        ("beam 3, top 2", {"inputs": CTC_LOGITS, "sequence_length": (I32, [2], [5, 3])},
         {"beam_width": 3, "top_paths": 2}),
        ("repeats kept", {"inputs": CTC_LOGITS, "sequence_length": (I32, [2], [5, 3])},
         {"beam_width": 3, "top_paths": 2, "merge_repeated": False}),
        ("beam 10, top 3, 6 classes", {"inputs": (F, [8, 3, 6], np.random.RandomState(1).randn(
            8, 3, 6).astype(np.float32)), "sequence_length": (I32, [3], [8, 5, 2])},
         {"beam_width": 10, "top_paths": 3}),
        ("beam 16, double", {"inputs": (D, [12, 2, 5], np.random.RandomState(2).randn(12, 2, 5)),
                             "sequence_length": (I32, [2], [12, 9])},
         {"beam_width": 16, "top_paths": 4}),
        ("beam 1", {"inputs": CTC_LOGITS, "sequence_length": (I32, [2], [5, 3])},
         {"beam_width": 1, "top_paths": 1}),
        ("more paths than the beam", {"inputs": CTC_LOGITS, "sequence_length": (I32, [2], [5, 3])},
         {"beam_width": 2, "top_paths": 3}),
        ("fewer leaves than paths", {"inputs": CTC_LOGITS, "sequence_length": (I32, [2], [0, 3])},
         {"beam_width": 3, "top_paths": 2}),
    ],
    "CTCGreedyDecoder": [
        ("plain", {"inputs": CTC_LOGITS, "sequence_length": (I32, [2], [5, 3])}, {}),
        ("merged, blank 0", {"inputs": CTC_LOGITS, "sequence_length": (I32, [2], [5, 3])},
         {"merge_repeated": True, "blank_index": 0}),
        ("blank -2, double", {"inputs": (D, [5, 2, 4], CTC_LOGITS[2]),
                              "sequence_length": (I32, [2], [4, 5])}, {"blank_index": -2}),
        ("too long", {"inputs": CTC_LOGITS, "sequence_length": (I32, [2], [6, 3])}, {}),
    ],
    "FakeQuantWithMinMaxArgs": [
        ("defaults", {"inputs": QUANT_IN}, {}),
        ("narrow 4 bits", {"inputs": QUANT_IN}, {"min": -1.3, "max": 2.9, "num_bits": 4,
                                                 "narrow_range": True}),
        ("16 bits", {"inputs": QUANT_IN}, {"min": -0.01, "max": 7.3, "num_bits": 16}),
        ("range above 0", {"inputs": QUANT_IN}, {"min": 0.5, "max": 2.0}),
        ("edges", {"inputs": (F, [3], [np.nan, np.inf, -np.inf])}, {}),
        ("min above max", {"inputs": QUANT_IN}, {"min": 2.0, "max": 1.0}),
        ("1 bit", {"inputs": QUANT_IN}, {"num_bits": 1}),
    ],
    "FakeQuantWithMinMaxArgsGradient": [
        ("narrow 4 bits", {"gradients": (F, [4, 8], None), "inputs": QUANT_IN},
         {"min": -1.3, "max": 2.9, "num_bits": 4, "narrow_range": True}),
        ("shapes differ", {"gradients": (F, [3], None), "inputs": QUANT_IN}, {}),
    ],
    "FakeQuantWithMinMaxVars": [
        ("5 bits", {"inputs": QUANT_IN, "min": (F, [], -1.3), "max": (F, [], 2.9)},
         {"num_bits": 5}),
        ("narrow 16 bits", {"inputs": QUANT_IN, "min": (F, [], -2.37), "max": (F, [], 5.1)},
         {"num_bits": 16, "narrow_range": True}),
        ("min above max", {"inputs": QUANT_IN, "min": (F, [], 2.0), "max": (F, [], 1.0)}, {}),
        ("off", {"inputs": QUANT_IN, "min": (F, [], 0.0), "max": (F, [], 0.0)}, {}),
        ("vector min", {"inputs": QUANT_IN, "min": (F, [1], -1.0), "max": (F, [], 1.0)}, {}),
    ],
    "FakeQuantWithMinMaxVarsGradient": [
        ("narrow", {"gradients": (F, [4, 8], None), "inputs": QUANT_IN, "min": (F, [], -1.3),
                    "max": (F, [], 2.9)}, {"narrow_range": True}),
        ("off", {"gradients": (F, [4, 8], None), "inputs": QUANT_IN, "min": (F, [], 0.0),
                 "max": (F, [], 0.0)}, {}),
    ],
    "FakeQuantWithMinMaxVarsPerChannel": [
        ("rows", {"inputs": QUANT_IN, "min": (F, [8], [-1, -6, 0, -0.01, -2.37, 0, 0.5, -9.1]),
                  "max": (F, [8], [1, 6, 3, 7.3, 5.1, 0, 2, -0.5])}, {"num_bits": 7}),
        ("vector", {"inputs": (F, [8], QUANT_IN[2][0]), "min": (F, [8], -1.3),
                    "max": (F, [8], 2.9)}, {"narrow_range": True}),
        ("nhwc", {"inputs": (F, [2, 2, 2, 4], None), "min": (F, [4], [-1, -2, -3, 0]),
                  "max": (F, [4], [1, 2, 3, 4])}, {"num_bits": 16}),
        ("wrong size", {"inputs": QUANT_IN, "min": (F, [3], -1.0), "max": (F, [3], 1.0)}, {}),
    ],
    "FakeQuantWithMinMaxVarsPerChannelGradient": [
        ("rows", {"gradients": (F, [4, 8], None), "inputs": QUANT_IN,
                  "min": (F, [8], [-1, -6, 0, -0.01, -2.37, 0, 0.5, -9.1]),
                  "max": (F, [8], [1, 6, 3, 7.3, 5.1, 0, 2, -0.5])}, {}),
    ],
    # Colour.
    "RGBToHSV": [
        ("pixels", {"images": RGB}, {}),
        ("double", {"images": (D, [2, 4, 3], RGB[2])}, {}),
        ("4 channels", {"images": (F, [2, 4], None)}, {}),
    ],
    "HSVToRGB": [
        ("pixels", {"images": RGB}, {}),
        ("hues past a turn", {"images": (F, [5, 3], [0.1, 0.5, 0.8, 0.95, 1, 0.5, 0.5, 0, 0.3,
                                                     1.2, 0.5, 0.5, -0.1, 0.5, 0.5])}, {}),
    ],
    "AdjustHue": [
        ("0.3", {"images": RGB, "delta": (F, [], 0.3)}, {}),
        ("-0.75", {"images": RGB, "delta": (F, [], -0.75)}, {}),
        ("2 channels", {"images": (F, [1, 4, 2], None), "delta": (F, [], 0.3)}, {}),
    ],
    "AdjustSaturation": [
        ("0.4", {"images": RGB, "scale": (F, [], 0.4)}, {}),
        ("3", {"images": RGB, "scale": (F, [], 3.0)}, {}),
    ],
    "AdjustContrastv2": [
        ("1.7", {"images": RGB, "contrast_factor": (F, [], 1.7)}, {}),
        ("odd plane", {"images": (F, [2, 5, 3, 2], (np.arange(60) / 7).astype(np.float32)),
                       "contrast_factor": (F, [], -0.4)}, {}),
        ("vector factor", {"images": RGB, "contrast_factor": (F, [1], 1.0)}, {}),
    ],
    # Non-maximum suppression.
    "NonMaxSuppression": [
        ("3 of 6", {"boxes": NMS_BOXES, "scores": NMS_SCORES, "max_output_size": (I32, [], 3)},
         {"iou_threshold": 0.5}),
        ("threshold 2", {"boxes": NMS_BOXES, "scores": NMS_SCORES,
                         "max_output_size": (I32, [], 3)}, {"iou_threshold": 2.0}),
    ],
    "NonMaxSuppressionV2": [
        ("10", {"boxes": NMS_BOXES, "scores": NMS_SCORES, "max_output_size": (I32, [], 10),
                "iou_threshold": (F, [], 0.5)}, {}),
        ("negative size", {"boxes": NMS_BOXES, "scores": NMS_SCORES,
                           "max_output_size": (I32, [], -1), "iou_threshold": (F, [], 0.5)}, {}),
    ],
    "NonMaxSuppressionV3": [
        ("score threshold", {"boxes": NMS_BOXES, "scores": NMS_SCORES,
                             "max_output_size": (I32, [], 10), "iou_threshold": (F, [], 0.5),
                             "score_threshold": (F, [], 0.4)}, {}),
        ("ties", {"boxes": (F, [3, 4], [0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1]),
                  "scores": (F, [3], [0.5, 0.5, 0.5]), "max_output_size": (I32, [], 3),
                  "iou_threshold": (F, [], 0.5), "score_threshold": (F, [], -1)}, {}),
    ],
    "NonMaxSuppressionV4": [
        ("padded", {"boxes": NMS_BOXES, "scores": NMS_SCORES, "max_output_size": (I32, [], 5),
                    "iou_threshold": (F, [], 0.5), "score_threshold": (F, [], 0.4)},
         {"pad_to_max_output_size": True}),
        ("unpadded", {"boxes": NMS_BOXES, "scores": NMS_SCORES, "max_output_size": (I32, [], 5),
                      "iou_threshold": (F, [], 0.3), "score_threshold": (F, [], 0.0)}, {}),
    ],
    "NonMaxSuppressionV5": [
        ("soft", {"boxes": NMS_BOXES, "scores": NMS_SCORES, "max_output_size": (I32, [], 6),
                  "iou_threshold": (F, [], 1.0), "score_threshold": (F, [], 0.0),
                  "soft_nms_sigma": (F, [], 0.5)}, {}),
        ("hard padded", {"boxes": NMS_BOXES, "scores": NMS_SCORES,
                         "max_output_size": (I32, [], 6), "iou_threshold": (F, [], 0.5),
                         "score_threshold": (F, [], 0.0), "soft_nms_sigma": (F, [], 0.0)},
         {"pad_to_max_output_size": True}),
        ("negative sigma", {"boxes": NMS_BOXES, "scores": NMS_SCORES,
                            "max_output_size": (I32, [], 6), "iou_threshold": (F, [], 0.5),
                            "score_threshold": (F, [], 0.0), "soft_nms_sigma": (F, [], -1.0)},
         {}),
    ],
    # CropAndResize and its gradients.
    "CropAndResize": [
        ("bilinear", {"image": CROP_IMAGE, "boxes": CROP_BOXES, "box_ind": CROP_IND,
                      "crop_size": (I32, [2], [3, 2])}, {}),
        ("nearest", {"image": CROP_IMAGE, "boxes": CROP_BOXES, "box_ind": CROP_IND,
                     "crop_size": (I32, [2], [2, 3])},
         {"method": "nearest", "extrapolation_value": -1.0}),
        ("one point", {"image": CROP_IMAGE, "boxes": CROP_BOXES, "box_ind": CROP_IND,
                       "crop_size": (I32, [2], [1, 1])}, {}),
        ("uint8", {"image": (U8, [2, 4, 5, 2], list(range(80))), "boxes": CROP_BOXES,
                   "box_ind": CROP_IND, "crop_size": (I32, [2], [4, 3])}, {}),
        ("index out of range", {"image": CROP_IMAGE, "boxes": CROP_BOXES,
                                "box_ind": (I32, [3], [1, 0, 2]),
                                "crop_size": (I32, [2], [3, 2])}, {}),
    ],
    "CropAndResizeGradImage": [
        ("bilinear", {"grads": CROP_GRADS, "boxes": CROP_BOXES, "box_ind": CROP_IND,
                      "image_size": (I32, [4], [2, 4, 5, 2])}, {"T": F}),
        ("nearest", {"grads": CROP_GRADS, "boxes": CROP_BOXES, "box_ind": CROP_IND,
                     "image_size": (I32, [4], [2, 4, 5, 2])}, {"T": F, "method": "nearest"}),
        ("double", {"grads": CROP_GRADS, "boxes": CROP_BOXES, "box_ind": CROP_IND,
                    "image_size": (I32, [4], [2, 4, 5, 2])}, {"T": D}),
    ],
    "CropAndResizeGradBoxes": [
        ("3x2", {"grads": CROP_GRADS, "image": CROP_IMAGE, "boxes": CROP_BOXES,
                 "box_ind": CROP_IND}, {}),
        ("1x1", {"grads": (F, [3, 1, 1, 2], None), "image": CROP_IMAGE, "boxes": CROP_BOXES,
                 "box_ind": CROP_IND}, {}),
    ],
    "MaxPoolWithArgmax": [
        ("valid", {"input": ARGMAX_IN}, {"ksize": [1, 2, 2, 1], "strides": [1, 1, 2, 1],
                                         "padding": "VALID"}),
        ("same int32 with batch", {"input": ARGMAX_IN},
         {"ksize": [1, 2, 3, 1], "strides": [1, 2, 2, 1], "padding": "SAME", "Targmax": I32,
          "include_batch_in_index": True}),
        ("int32 input", {"input": (I32, [2, 3, 4, 2], ARGMAX_IN[2])},
         {"ksize": [1, 2, 2, 1], "strides": [1, 1, 2, 1], "padding": "VALID"}),
        ("window past input", {"input": ARGMAX_IN}, {"ksize": [1, 5, 2, 1],
                                                     "strides": [1, 1, 2, 1], "padding": "VALID"}),
    ],
    "MaxPoolGradWithArgmax": [
        ("valid", {"input": ARGMAX_IN, "grad": (F, [2, 2, 2, 2], None),
                   "argmax": (I64, [2, 2, 2, 2], [8, 11, 12, 5, 18, 11, 12, 13, 2, 11, 6, 5, 18,
                                                  11, 14, 21])},
         {"ksize": [1, 2, 2, 1], "strides": [1, 1, 2, 1], "padding": "VALID"}),
    ],
    "ExtractImagePatches": [
        ("valid", {"images": (F, [1, 5, 6, 2], None)},
         {"ksizes": [1, 2, 3, 1], "strides": [1, 2, 2, 1], "rates": [1, 1, 1, 1],
          "padding": "VALID"}),
        ("same with rates", {"images": (F, [2, 5, 6, 2], None)},
         {"ksizes": [1, 2, 2, 1], "strides": [1, 3, 2, 1], "rates": [1, 2, 2, 1],
          "padding": "SAME"}),
        ("int64", {"images": (I64, [1, 4, 4, 3], None)},
         {"ksizes": [1, 3, 3, 1], "strides": [1, 1, 1, 1], "rates": [1, 1, 1, 1],
          "padding": "SAME"}),
        ("window past input", {"images": (F, [1, 5, 6, 2], None)},
         {"ksizes": [1, 6, 3, 1], "strides": [1, 2, 2, 1], "rates": [1, 1, 1, 1],
          "padding": "VALID"}),
        ("depth ksize", {"images": (F, [1, 5, 6, 2], None)},
         {"ksizes": [1, 2, 3, 2], "strides": [1, 2, 2, 1], "rates": [1, 1, 1, 1],
          "padding": "VALID"}),
    ],
    "DrawBoundingBoxes": [
        ("rgb", {"images": (F, [1, 5, 6, 3], None), "boxes": DRAW_BOXES}, {}),
        ("grey", {"images": (F, [1, 4, 4, 1], None), "boxes": (F, [1, 1, 4], [0, 0, 1, 1])}, {}),
        ("2 channels", {"images": (F, [1, 4, 4, 2], None), "boxes": (F, [1, 1, 4], [0, 0, 1, 1])},
         {}),
    ],
    "DrawBoundingBoxesV2": [
        ("colours", {"images": (F, [1, 5, 6, 4], None), "boxes": DRAW_BOXES,
                     "colors": (F, [2, 4], [0.25, 0.5, 0.75, 1, 1, 0, 0, 0])}, {}),
        ("no colours", {"images": (F, [1, 5, 6, 3], None), "boxes": DRAW_BOXES,
                        "colors": (F, [0, 4], [])}, {}),
    ],
    # The decompositions.
    "Qr": [
        ("tall", {"input": TALL}, {}),
        ("tall full", {"input": TALL}, {"full_matrices": True}),
        ("wide float", {"input": (F, [2, 3, 4], None)}, {}),
    ],
    "Svd": [
        ("tall", {"input": TALL}, {}),
        ("tall full", {"input": TALL}, {"full_matrices": True}),
        ("values only", {"input": TALL}, {"compute_uv": False}, {"compare": 1}),
    ],
    "SelfAdjointEigV2": [
        ("vectors", {"input": POSITIVE_DEFINITE}, {}),
        ("values only", {"input": POSITIVE_DEFINITE}, {"compute_v": False}, {"compare": 1}),
        ("not square", {"input": TALL}, {}),
    ],
    "Lu": [
        ("pivoted", {"input": WELL_CONDITIONED}, {}),
        ("int64 float", {"input": (F, [2, 2], [0, 1, 1, 0])}, {"output_idx_type": I64}),
        ("singular", {"input": (D, [2, 2], [1, 2, 2, 4])}, {}),
    ],
    "MatrixSolveLs": [
        ("tall", {"matrix": TALL, "rhs": (D, [4, 2], [1, 0, 2, 1, -1, 3, 0.5, 0.5]),
                  "l2_regularizer": (D, [], 0.0)}, {}),
        ("regularised", {"matrix": TALL, "rhs": (D, [4, 2], [1, 0, 2, 1, -1, 3, 0.5, 0.5]),
                         "l2_regularizer": (D, [], 0.5)}, {}),
        ("complete orthogonal", {"matrix": TALL, "rhs": (D, [4, 2], [1, 0, 2, 1, -1, 3, 0.5, 0.5]),
                                 "l2_regularizer": (D, [], 0.0)}, {"fast": False}),
        ("incompatible", {"matrix": TALL, "rhs": (D, [3, 2], None),
                          "l2_regularizer": (D, [], 0.0)}, {}),
    ],
    # Fused recurrent cells.
    "LSTMBlockCell": [
        ("plain", LSTM_IN, {}),
        ("peepholes and clip", LSTM_IN, {"use_peephole": True, "cell_clip": 0.2,
                                          "forget_bias": 0.5}),
    ],
    "BlockLSTM": [
        ("whole sequence", {"seq_len_max": (I64, [], 3), "x": (F, [3, 2, 3], None), **LSTM_IN_STATE},
         {"use_peephole": True}),
    ],
    "BlockLSTMV2": [
        ("whole sequence", {"seq_len_max": (I64, [], 3), "x": (F, [3, 2, 3], None), **LSTM_IN_STATE},
         {}),
    ],
    "GRUBlockCell": [("step", GRU_IN, {})],
    "LSTMBlockCellGrad": [
        ("plain", {**LSTM_IN, **LSTM_GRAD_IN}, {"use_peephole": False}),
        ("peepholes", {**LSTM_IN, **LSTM_GRAD_IN}, {"use_peephole": True}),
        ("batch mismatch", {**LSTM_IN, **LSTM_GRAD_IN, "h_grad": (F, [1, 2], None)},
         {"use_peephole": False}),
    ],
    "BlockLSTMGrad": [
        ("two of three steps", {"seq_len_max": (I64, [], 2), "x": (F, [3, 2, 3], None),
                                **LSTM_IN_STATE, **BLOCK_GRAD_IN}, {"use_peephole": True}),
        ("no steps", {"seq_len_max": (I64, [], 0), "x": (F, [3, 2, 3], None),
                      **LSTM_IN_STATE, **BLOCK_GRAD_IN}, {"use_peephole": False}),
    ],
    "BlockLSTMGradV2": [
        ("whole sequence", {"seq_len_max": (I64, [], 3), "x": (F, [3, 2, 3], None),
                            **LSTM_IN_STATE, **BLOCK_GRAD_IN}, {"use_peephole": True}),
    ],
    "GRUBlockCellGrad": [
        ("step", {**GRU_IN, "r": (F, [2, 2], [0.3, 0.7, 0.45, 0.6]),
                  "u": (F, [2, 2], [0.55, 0.2, 0.8, 0.35]),
                  "c": (F, [2, 2], [-0.4, 0.9, 0.15, -0.6]),
                  "d_h": (F, [2, 2], [0.5, -1, 0.25, 0.75])}, {}),
    ],
    "ConcatOffset": [
        ("axis 1", {"concat_dim": (I32, [], [1]), "shape": [(I32, [4], [2, 2, 5, 7]),
                    (I32, [4], [2, 3, 5, 7]), (I32, [4], [2, 4, 5, 7])]}, {}),
        ("int64, axis -3", {"concat_dim": (I32, [], [-3]), "shape": [(I64, [4], [2, 2, 5, 7]),
                            (I64, [4], [2, 3, 5, 7])]}, {}),
        ("axis out of range", {"concat_dim": (I32, [], [4]), "shape": [(I32, [4], [2, 2, 5, 7]),
                               (I32, [4], [2, 3, 5, 7])]}, {}),
        ("other dims differ", {"concat_dim": (I32, [], [1]), "shape": [(I32, [4], [2, 2, 5, 7]),
                               (I32, [4], [2, 3, 6, 7])]}, {}),
        ("ranks differ", {"concat_dim": (I32, [], [1]), "shape": [(I32, [4], [2, 2, 5, 7]),
                          (I32, [3], [2, 3, 5])]}, {}),
    ],
    "TensorStridedSliceUpdate": [
        ("x[0:2, 1:3] = v", {"input": (D, [2, 3], None), "begin": (I32, [2], [0, 1]),
                             "end": (I32, [2], [2, 3]), "strides": (I32, [2], [1, 1]),
                             "value": (D, [2, 2], [9, 8, 7, 6])}, {}),
        ("broadcast value", {"input": (F, [3, 4], None), "begin": (I32, [2], [1, 0]),
                             "end": (I32, [2], [3, 4]), "strides": (I32, [2], [1, 2]),
                             "value": (F, [2], [-1, -2])}, {}),
        ("row, shrunk", {"input": (I32, [2, 3], None), "begin": (I32, [1], [1]),
                         "end": (I32, [1], [2]), "strides": (I32, [1], [1]),
                         "value": (I32, [3], [5, 5, 5])}, {"shrink_axis_mask": 1}),
        ("value does not broadcast", {"input": (F, [2, 3], None), "begin": (I32, [2], [0, 1]),
                                      "end": (I32, [2], [2, 3]), "strides": (I32, [2], [1, 1]),
                                      "value": (F, [3], [1, 2, 3])}, {}),
    ],
    "ImageSummary": [
        ("floats, a NaN pixel", {"tag": (STR, [], [b"imgs"]),
                                 "tensor": (F, [2, 2, 2, 3], [-1, 0.5, 2, 0.25, np.nan, 1, 3, -2.5, 0,
                                                              1.5, 0.75, -0.125] + list(range(12)))},
         {}),
        ("uint8, one image", {"tag": (STR, [], [b"u"]),
                              "tensor": (types_pb2.DT_UINT8, [1, 2, 2, 3], list(range(0, 240, 20)))},
         {"max_images": 1}),
    ],
    "EncodeWav": [("stereo, clamped", {"audio": (F, [3, 2], [0.5, -0.25, 1, -1.2, 1e-5, 0]),
                                       "sample_rate": (I32, [], [16000])}, {}),
                  ("not 2-D", {"audio": (F, [3], None), "sample_rate": (I32, [], [16000])}, {})],
    "DecodeWav": [("as written", {"contents": (STR, [], [_WAV])}, {}),
                  ("3 channels, 4 samples", {"contents": (STR, [], [_WAV])},
                   {"desired_channels": 3, "desired_samples": 4}),
                  ("truncated", {"contents": (STR, [], [_WAV[:40]])}, {})],
    "AudioSpectrogram": [
        ("2 channels, window 12, stride 7", {"input": (F, [40, 2], [((t * 13) % 17 - 8) / 16 if c == 0
                                                                    else ((t * 5) % 7 - 3) / 8
                                                                    for t in range(40)
                                                                    for c in range(2)])},
         {"window_size": 12, "stride": 7, "magnitude_squared": True}),
        ("magnitudes, window 64", {"input": (F, [200, 1], np.sin(np.arange(200) * 0.3) / 2)},
         {"window_size": 64, "stride": 32}),
        ("window 1", {"input": (F, [8, 1], None)}, {"window_size": 1, "stride": 1}),
    ],
    "Mfcc": [
        ("defaults, 257 bins", {"spectrogram": (F, [1, 2, 257], [((k * 37 + f * 11) % 101) / 20
                                                                 for f in range(2)
                                                                 for k in range(257)]),
                                "sample_rate": (I32, [], [16000])}, {}),
        ("20 bands, 5 coefficients", {"spectrogram": (F, [2, 1, 129], [((k * 7) % 13) / 3
                                                                       for k in range(258)]),
                                      "sample_rate": (I32, [], [8000])},
         {"upper_frequency_limit": 3000.0, "lower_frequency_limit": 100.0,
          "filterbank_channel_count": 20, "dct_coefficient_count": 5}),
        ("too many coefficients", {"spectrogram": (F, [1, 1, 257], None),
                                   "sample_rate": (I32, [], [16000])},
         {"dct_coefficient_count": 50}),
    ],
    "AudioSummaryV2": [("two clips", {"tag": (STR, [], [b"snd"]),
                                      "tensor": (F, [2, 3], [0.5, -0.5, 0.25, 0.1, 0.2, -1.5]),
                                      "sample_rate": (F, [], [8000.4])}, {"max_outputs": 2})],
    "GuaranteeConst": [("floats", {"input": (F, [2, 3], None)}, {})],
    "BroadcastGradientArgs": [
        ("2x3 and 3", {"s0": (I32, [2], [2, 3]), "s1": (I32, [1], [3])}, {}),
        ("2x1 and 1x3", {"s0": (I32, [2], [2, 1]), "s1": (I32, [2], [1, 3])}, {}),
        ("incompatible", {"s0": (I32, [2], [2, 3]), "s1": (I32, [1], [4])}, {}),
    ],
    "Softmax": [("rows", {"logits": (F, [2, 3], None)}, {}),
                ("edges", {"logits": (F, [2, 3], EDGES["float"][0])}, {})],
    "SparseSoftmaxCrossEntropyWithLogits": [
        ("labels in range", {"features": (F, [2, 3], None), "labels": (I32, [2], [2, 0])}, {}),
        ("label out of range", {"features": (F, [2, 3], None), "labels": (I32, [2], [3, 0])}, {}),
    ],
    "BiasAdd": [
        ("NHWC", {"value": (F, [2, 3], None), "bias": (F, [3], None)}, {}),
        ("bias too short", {"value": (F, [2, 3], None), "bias": (F, [2], None)}, {}),
    ],
}

# Differences kept on purpose: "Op/case" -> TensorFlow's behaviour and why
# Towerflow's differs. Filled from the check's findings (see the log).
_ROUND = ("TF 2.21's CPU Round of int32 and int64 gives 0 for every element (its half-to-even "
          "functor on integers); Towerflow gives the integer itself, which is already round")
_WHERE = ("TF refuses a scalar (\"WhereOp : Unhandled input dimensions: 0\"); Towerflow gives "
          "the [count, 0] result np.argwhere gives")
_XENT = ("TF's kernel broadcasts labels [3] against logits [2, 3]; Towerflow wants both "
         "[batch, classes], which is what every TF front end passes it")
_NO_TF_HALF = ("TF 2.21's CPU has no kernel (or shape function) for this op in this 16-bit "
               "type; Towerflow's computes it in float32 and rounds once")
_TRUNCATE_BY_ZERO = (
    "an integer zero divisor: TF's TruncateDiv and TruncateMod kernels fail with Internal "
    "(\"Unexpected error in binary operator\"); Towerflow gives InvalidArgument \"Integer "
    "division by zero\" as TF's Div, FloorDiv and FloorMod")
# Cases whose TF answer depends on the CPU the check runs on (TF's oneDNN
# paths, taken on CPUs with AVX-512, against its Eigen ones): reported when
# they differ, neither a failure nor stale when they agree.
CPU_DEPENDENT = {
    "Softmax/edges": (
        "a row holding NaN and -inf: TF's vectorised CPU softmax leaves the exp(-inf) entry at "
        "0 on some CPUs; Towerflow makes the whole row NaN (its normaliser is NaN), as TF on "
        "others"),
    **{f"Conv3D/{case}": (
        "TF's CPU runs dilated and NCDHW Conv3D only through oneDNN (CPUs with AVX-512) and "
        "refuses them elsewhere; Towerflow runs them on every CPU") for case in ("dilated", "NCDHW")},
}

KNOWN_DIFFERENCES = {
    "SetSize/index past its dim": (
        "an unvalidated index past its dimension: TF's message with TF's code Internal, "
        "Towerflow's with InvalidArgument (the indices are wrong, not the kernel)"),
    "EditDistance/position past the output": (
        "a sequence whose position lies outside the output: TF's message with TF's code "
        "Internal, Towerflow's with InvalidArgument (the indices are wrong, not the kernel)"),
    "SparseSliceGrad/not all used": (
        "output indices that the input's do not hold: TF's message with TF's code Internal, "
        "Towerflow's with InvalidArgument (the inputs are wrong, not the kernel)"),
    **{f"TruncateDiv/{t} zero divisor": _TRUNCATE_BY_ZERO
       for t in ("int8", "int16", "uint8", "uint16", "uint32", "uint64")},
    **{f"{op}/{t} edges": _TRUNCATE_BY_ZERO
       for op in ("TruncateDiv", "TruncateMod") for t in ("int32", "int64")},
    "CTCLoss/collapse, double": (
        "TF's double CTCLoss takes the softmax in float (its kernel's ArrayXf), so its losses "
        "are 1e-9 from the double ones (6.008798027825048 for 6.008798020679546); Towerflow "
        "computes in double throughout, as a double reference forward pass gives"),
    "CTCBeamSearchDecoder/beam 16, double": (
        "TF's beam search adds double probabilities with its float LogSumExp (ctc_loss_util.h), "
        "so its double log probabilities are 1e-8 from the double ones; the paths agree"),
    "Cast/float edges to int32": (
        "NaN, infinities and 1e30 to int32: TF gives INT_MIN (the x86 conversion of a value "
        "C++ leaves undefined); Towerflow saturates (NaN to 0, +inf and 1e30 to INT_MAX), the "
        "same on every machine"),
    "Erf/float64 edges": (
        "TF's double erf gives NaN at +-inf; Towerflow gives +-1, the limit (std::erf; TF's "
        "float erf agrees)"),
    "TopK/k 2 with ties": (
        "TF refuses TopK in every graph of GraphDef version 7 or later (it was removed there); "
        "Towerflow runs it, for the older graphs that have it (kernels:nn_ops_test checks its "
        "values against TopKV2's)"),
    "EnsureShape/unknown rank": (
        "an unknown-rank shape attr: TF's shape function asks for rank -1 and refuses every "
        "input; Towerflow lets any tensor through, as the attr means"),
    **{f"Round/{t} {v}": _ROUND for t in ("int32", "int64") for v in ("2x3", "scalars", "edges")},
    **{f"Where/{t} scalars": _WHERE
       for t in ("float32", "float64", "int32", "int64", "bool", "bfloat16")},
    **{f"SoftmaxCrossEntropyWithLogits/{t} broadcast 2x3 3": _XENT
       for t in ("float32", "float64", "float16", "bfloat16")},
    # half and bfloat16: every float CPU kernel of Towerflow takes them
    # (kernels/cpu/float16_kernels.cc); TF's CPU lacks some.
    **{f"Where/float16 {v}": _NO_TF_HALF for v in ("2x3", "scalars", "empty 0x3", "edges")},
    **{f"ToBool/{t} scalars": _NO_TF_HALF for t in ("float16", "bfloat16")},
    "Range/float16 scalars": _NO_TF_HALF,
    **{f"{op}/{t} edges": (
        "TF's Unique of 16-bit floats keys its table by the bits, so -0 and 0 are two values; "
        "Towerflow compares values (as both do for float and double), so they are one")
       for op in ("Unique", "UniqueWithCounts") for t in ("float16", "bfloat16")},
}


def numpy_values(dtype, shape, values, which):
    """An array of `dtype` and `shape`: `values` (cycled), else a pattern."""
    kind = ("bool" if dtype == B else "float" if dtype in (F, D) + SIXTEEN else
            "string" if dtype == types_pb2.DT_STRING else
            "complex" if dtype in (C64, C128) else "int")
    if values is None:
        values = PATTERNS[kind][which % 2]
    count = int(np.prod(shape)) if shape else 1
    unsigned_bits = {types_pb2.DT_UINT8: 8, types_pb2.DT_UINT16: 16, types_pb2.DT_UINT32: 32,
                     types_pb2.DT_UINT64: 64, types_pb2.DT_QUINT8: 8,
                     types_pb2.DT_QUINT16: 16}.get(dtype)
    if unsigned_bits is not None:  # patterns' negative values wrap, as in C++
        values = [int(v) % (1 << unsigned_bits) for v in np.asarray(values).flatten().tolist()]
    flat = np.resize(np.array(values, dtype=NUMPY[dtype]), count)
    return flat.reshape(shape)


class Case:
    def __init__(self, op, name, inputs, attrs, outputs, compared=None):
        self.op, self.name, self.inputs, self.attrs, self.outputs = op, name, inputs, attrs, outputs
        # The outputs compared: the first ones (the others hold what each
        # implementation keeps for itself, as FusedBatchNorm's reserve spaces).
        self.compared = outputs if compared is None else compared

    @property
    def key(self):
        return f"{self.op}/{self.name}"

    def graph_def(self):
        graph = graph_pb2.GraphDef()
        node = graph.node.add(name="op", op=self.op)
        for i, value in enumerate(self.inputs):
            const = graph.node.add(name=f"in_{i}", op="Const")
            const.attr["dtype"].type = tf.dtypes.as_dtype(value.dtype).as_datatype_enum
            const.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(value))
            node.input.append(const.name)
        for name, value in self.attrs.items():
            node.attr[name].CopyFrom(value)
        return graph


def attr_value(op_attr, value):
    """An AttrValue of the OpDef attribute's type from a Python value."""
    out = attr_value_pb2.AttrValue()
    kind = op_attr.type
    if kind == "type":
        out.type = value
    elif kind == "int":
        out.i = value
    elif kind == "float":
        out.f = value
    elif kind == "bool":
        out.b = value
    elif kind == "string":
        out.s = value.encode()
    elif kind == "list(int)":
        out.list.i.extend(value)
    elif kind == "list(float)":
        out.list.f.extend(value)
    elif kind == "list(type)":
        out.list.type.extend(value)
    elif kind == "shape":
        if value is None:
            out.shape.unknown_rank = True
        for size in value or []:
            out.shape.dim.add(size=size)
    else:
        raise ValueError(f"attribute {op_attr.name} of type {kind}")
    return out


def allowed(op_attr):
    if op_attr.HasField("allowed_values") and op_attr.allowed_values.list.type:
        return list(op_attr.allowed_values.list.type)
    return None


def not_compared(op_def):
    """Why the op's cases are not generated, or None."""
    if op_def.name.startswith("_"):
        return "Towerflow's private op"
    if op_def.is_stateful and op_def.name not in STATEFUL_COMPARED:
        return "stateful (variables, queues, random numbers, I/O)"
    if op_def.name in FRAME_OPS:
        return "control flow (dead outputs, loop frames) or a fed value: the control-flow checks"
    if any(arg.is_ref for arg in op_def.input_arg):
        return "takes a reference (a VariableV2) as input"
    for a in op_def.attr:
        if a.type in ("func", "list(func)"):
            return "takes functions"
    for arg in list(op_def.input_arg) + list(op_def.output_arg):
        if arg.type in (types_pb2.DT_RESOURCE, types_pb2.DT_VARIANT):
            return f"{tf.dtypes.as_dtype(arg.type).name} {'input' if arg in op_def.input_arg else 'output'}"
        if arg.type_list_attr and op_def.name not in CASES:
            return "lists of types"
    return None


def output_count(op_def, attrs):
    count = 0
    for arg in op_def.output_arg:
        count += (attrs[arg.number_attr].i if arg.number_attr else
                  len(attrs[arg.type_list_attr].list.type) if arg.type_list_attr else 1)
    return count


def input_dtype(op_def, arg, attrs):
    return arg.type if arg.type else attrs[arg.type_attr].type


def hand_cases(op_def):
    cases = []
    args = {a.name: a for a in op_def.input_arg}
    op_attrs = {a.name: a for a in op_def.attr}
    for name, inputs, given, *options in CASES[op_def.name]:
        options = options[0] if options else {}
        attrs = {k: attr_value(op_attrs[k], v) for k, v in given.items() if k in op_attrs}
        values = []
        for arg in op_def.input_arg:
            spec = inputs[arg.name]
            specs = spec if isinstance(spec, list) else [spec]
            if arg.number_attr:
                attrs[arg.number_attr] = attr_value(op_attrs[arg.number_attr], len(specs))
            if arg.type_list_attr and arg.type_list_attr not in attrs:  # a list of types
                attrs[arg.type_list_attr] = attr_value(op_attrs[arg.type_list_attr],
                                                       [spec[0] for spec in specs])
            for i, (dtype, shape, vals) in enumerate(specs):
                values.append(numpy_values(dtype, shape, vals, i))
                if arg.type_attr and arg.type_attr not in attrs:
                    attrs[arg.type_attr] = attr_value(op_attrs[arg.type_attr], dtype)
        for a in op_def.attr:  # type attrs of outputs alone keep their defaults
            if a.type == "type" and a.name not in attrs and a.name in given:
                attrs[a.name] = attr_value(a, given[a.name])
        cases.append(Case(op_def.name, name, values, attrs, output_count(op_def, attrs),
                          options.get("compare")))
    return cases


# The integer types besides int32 and int64 (kernels/cpu/cwise_int_ops.cc),
# compared in the elementwise ops TF's CPU takes them in: each type's
# extremes beside small values (sums and products wrap, -min / -1 too),
# broadcast against a row, and a zero divisor.
NARROW_INTS = [types_pb2.DT_INT8, types_pb2.DT_INT16, types_pb2.DT_UINT8, types_pb2.DT_UINT16,
               types_pb2.DT_UINT32, types_pb2.DT_UINT64]
NARROW_INT_OPS = {op: NARROW_INTS for op in [
    "AddV2", "Sub", "Mul", "Div", "FloorDiv", "FloorMod", "TruncateDiv", "Maximum", "Minimum",
    "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual", "BitwiseAnd",
    "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift", "Invert", "PopulationCount"]}
NARROW_INT_OPS["Add"] = NARROW_INTS[:3]


def narrow_int_cases(op_def):
    if op_def.name not in NARROW_INT_OPS:
        return []
    cases = []
    t = next(a for a in op_def.attr if a.name == "T")
    for dtype in NARROW_INT_OPS.get(op_def.name, []):
        kind = NUMPY[dtype]
        lo, hi = int(np.iinfo(kind).min), int(np.iinfo(kind).max)
        small = [v for v in (-7, -1, 3, 5) if lo <= v]
        x = np.array([lo, hi] + small + [hi // 3, 1][:6 - 2 - len(small)], dtype=kind)
        y = np.array(([-1] if lo < 0 else [hi]) + [2, 3, 1, 7, hi // 5][:5], dtype=kind)
        named = tf.dtypes.as_dtype(dtype).name
        variants = [(f"{named} extremes", [x, y]),
                    (f"{named} broadcast", [x.reshape(6, 1), y[:3]]),
                    (f"{named} zero divisor", [x[:3], np.array([2, 0, 1], dtype=kind)])]
        for name, values in variants:
            values = values[:len(op_def.input_arg)]
            cases.append(Case(op_def.name, name, values, {"T": attr_value(t, dtype)},
                              len(op_def.output_arg)))
    return cases


# The elementwise ops TF's CPU computes on complex numbers, compared in
# complex64 and complex128: same shapes and a broadcast row.
COMPLEX_OPS = ["Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "Pow", "Equal", "NotEqual", "Neg",
               "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Tanh", "Reciprocal", "Inv", "Sin", "Cos",
               "ZerosLike", "OnesLike", "Identity", "Transpose", "Tile", "Reshape", "Pad",
               "ReverseV2", "ConcatV2"]


def complex_cases(op_def):
    if op_def.name not in COMPLEX_OPS:
        return []
    cases = []
    main = next(a for a in op_def.attr if a.type == "type")
    for dtype in (C64, C128):
        x = numpy_values(dtype, [2, 3], None, 0)
        y = numpy_values(dtype, [2, 3], None, 1)
        extra = {"Transpose": [np.array([1, 0], np.int32)], "Tile": [np.array([2, 1], np.int32)],
                 "Reshape": [np.array([3, 2], np.int32)],
                 "Pad": [np.array([[1, 0], [0, 2]], np.int32)],
                 "ReverseV2": [np.array([1], np.int32)],
                 "ConcatV2": [y, np.array(1, np.int32)]}.get(op_def.name)
        variants = [("same shape", [x] + (extra or [y]))]
        if extra is None and len(op_def.input_arg) == 2:
            variants.append(("broadcast", [x, y[0]]))
        named = tf.dtypes.as_dtype(dtype).name
        for name, values in variants:
            values = values[:len(op_def.input_arg) + (1 if op_def.name == "ConcatV2" else 0)]
            attrs = {main.name: attr_value(main, dtype)}
            if op_def.name == "ConcatV2":
                attrs["N"] = attr_value(next(a for a in op_def.attr if a.name == "N"), 2)
            cases.append(Case(op_def.name, f"{named} {name}", values, attrs,
                              len(op_def.output_arg)))
    return cases


def generated_cases(op_def):
    """The automatic cases, or (None, why) when the op needs hand cases."""
    op_attrs = {a.name: a for a in op_def.attr}
    type_attrs = [a for a in op_def.attr if a.type == "type"]
    for a in op_def.attr:
        if a.type not in ("type", "int") and not a.HasField("default_value"):
            return None, f"needs attribute {a.name} ({a.type})"
        if a.type == "int" and not a.HasField("default_value") and not any(
                arg.number_attr == a.name for arg in op_def.input_arg):
            return None, f"needs attribute {a.name} (int)"
    main = next((op_attrs[arg.type_attr] for arg in op_def.input_arg if arg.type_attr), None)
    dtypes = [None]
    if main is not None:
        dtypes = [d for d in DTYPES if allowed(main) is None or d in allowed(main)]
        if not dtypes:
            return None, f"no dtype of {main.name} among float, double, int32, int64, bool"
    cases = []
    for dtype in dtypes:
        attrs = {}
        for a in type_attrs:
            if a is main:
                attrs[a.name] = attr_value(a, dtype)
            elif a.HasField("default_value"):
                attrs[a.name] = a.default_value
            else:
                choices = [d for d in DTYPES if allowed(a) is None or d in allowed(a)]
                if not choices:
                    return None, f"no dtype for {a.name}"
                attrs[a.name] = attr_value(a, choices[0])
        for arg in op_def.input_arg:
            if arg.number_attr:
                attrs[arg.number_attr] = attr_value(op_attrs[arg.number_attr],
                                                    max(2, op_attrs[arg.number_attr].minimum))
        # The inputs: (dtype, is it an axis) for each tensor.
        slots = []
        for arg in op_def.input_arg:
            n = attrs[arg.number_attr].i if arg.number_attr else 1
            slots += [(input_dtype(op_def, arg, attrs), arg.name in AXIS_NAMES)] * n
        data = [i for i, (_, axis) in enumerate(slots) if not axis]
        suffix = NAME[dtype] if dtype is not None else "fixed"
        variants = [("2x3", [[2, 3]] * len(data)), ("scalars", [[]] * len(data))]
        if len(data) >= 2:
            variants.append(("broadcast 2x3 3", [[2, 3]] + [[3]] * (len(data) - 1)))
            variants.append(("2x3 against 4 (bad)", [[2, 3]] + [[4]] * (len(data) - 1)))
        else:
            variants.append(("empty 0x3", [[0, 3]]))
        edge_kind = {F: "float", D: "float", I32: "int", I64: "int", **{t: "float" for t in SIXTEEN}}.get(dtype)
        if edge_kind is not None:
            variants.append(("edges", [[6]] * len(data)))
        for variant, shapes in variants:
            values, k = [], 0
            for i, (slot_dtype, axis) in enumerate(slots):
                if slot_dtype not in NUMPY:
                    return None, f"an input of {tf.dtypes.as_dtype(slot_dtype).name}"
                if axis:
                    values.append(np.array(1 if variant not in ("scalars", "edges") else 0,
                                           dtype=NUMPY[slot_dtype]))
                    continue
                edges = None
                if variant == "edges":
                    edges = EDGES[edge_kind][k % 2]
                    if slot_dtype != dtype:  # an input of another type: its pattern
                        edges = None
                values.append(numpy_values(slot_dtype, shapes[k], edges, k))
                k += 1
            cases.append(Case(op_def.name, f"{suffix} {variant}", values, dict(attrs),
                              output_count(op_def, attrs)))
    return cases, None


# ---- running

CODES = {getattr(tf.errors, n).__name__: c for n, c in [
    ("CancelledError", 1), ("UnknownError", 2), ("InvalidArgumentError", 3),
    ("DeadlineExceededError", 4), ("NotFoundError", 5), ("AlreadyExistsError", 6),
    ("PermissionDeniedError", 7), ("ResourceExhaustedError", 8),
    ("FailedPreconditionError", 9), ("AbortedError", 10), ("OutOfRangeError", 11),
    ("UnimplementedError", 12), ("InternalError", 13), ("UnavailableError", 14),
    ("DataLossError", 15)]}


def session_config():
    rewrite = rewriter_config_pb2.RewriterConfig(
        constant_folding=rewriter_config_pb2.RewriterConfig.OFF,
        disable_meta_optimizer=True)
    return config_pb2.ConfigProto(
        intra_op_parallelism_threads=1, inter_op_parallelism_threads=1,
        graph_options=config_pb2.GraphOptions(
            rewrite_options=rewrite,
            optimizer_options=config_pb2.OptimizerOptions(
                opt_level=config_pb2.OptimizerOptions.L0, do_constant_folding=False)))


def run_tensorflow(case, config):
    """(code, message, [arrays])."""
    graph = tf1.Graph()
    try:
        with graph.as_default():
            tf1.import_graph_def(case.graph_def(), name="")
        with tf1.Session(graph=graph, config=config) as session:
            values = session.run([f"op:{i}" for i in range(case.outputs)])
        return 0, "", values
    except tf.errors.OpError as e:
        return CODES.get(type(e).__name__, 2), e.message, None
    except (ValueError, TypeError) as e:  # refused while the graph is built
        return 3, str(e), None


def run_towerflow(driver, work, cases):
    """(code, message, [arrays]) of each case; a crash is code -1."""
    results = []
    pending = list(enumerate(cases))
    while pending:
        manifest = []
        for i, case in pending:
            path = os.path.join(work, f"case_{i}.pb")
            with open(path, "wb") as f:
                f.write(case.graph_def().SerializeToString())
            manifest.append({"graph": path, "fetch": [f"op:{k}" for k in range(case.outputs)],
                             "out": os.path.join(work, f"case_{i}")})
        manifest_path = os.path.join(work, "manifest.json")
        with open(manifest_path, "w") as f:
            json.dump(manifest, f)
        done = subprocess.run([driver, "cases", f"--manifest={manifest_path}"],
                              capture_output=True, text=True)
        lines = done.stdout.splitlines()
        for (i, case), line in zip(pending, lines):
            status = json.loads(line)
            values = None
            if status["code"] == 0:
                values = []
                for k in range(case.outputs):
                    proto = tf1.make_tensor_proto(0)  # a TensorProto to parse into
                    with open(os.path.join(work, f"case_{i}.{k}.pb"), "rb") as f:
                        proto.ParseFromString(f.read())
                    values.append(tf.make_ndarray(proto))
            results.append((status["code"], status["message"], values))
        if len(lines) < len(pending):
            if done.returncode == 0:
                raise RuntimeError(f"the driver answered {len(lines)} of {len(pending)} cases")
            # The case after the last answered one crashed the driver.
            results.append((-1, f"Towerflow crashed (exit {done.returncode}): "
                                f"{done.stderr.strip()[-500:]}", None))
            pending = pending[len(lines) + 1:]
        else:
            pending = []
    return results


def no_kernel(code, message, towerflow):
    if towerflow:
        return (code == 12 and "No kernel for op" in message) or (
            "no supported kernel for" in message)
    return "No OpKernel was registered" in message or "Could not satisfy" in message


def compare(case, theirs, mine):
    """'agree', 'agree on the error', 'TF-only', 'Towerflow-only' or 'differ: why'."""
    (tf_code, tf_message, tf_values), (tw_code, tw_message, tw_values) = theirs, mine
    if tw_code == -1:
        return "differ: " + tw_message
    tf_missing, tw_missing = no_kernel(tf_code, tf_message, False), no_kernel(tw_code, tw_message,
                                                                              True)
    if tf_missing and tw_missing:
        return "neither has a kernel"
    if tw_missing:
        return "TF-only"
    if tf_missing:
        return "Towerflow-only"
    if tf_code != 0 or tw_code != 0:
        if tf_code == tw_code:
            return "agree on the error"
        return (f"differ: TF {tf_code} ({tf_message.splitlines()[0][:160] if tf_message else 'OK'})"
                f", Towerflow {tw_code} ({tw_message[:160] if tw_message else 'OK'})")
    for k, (want, got) in enumerate(zip(tf_values[:case.compared], tw_values)):
        # A string scalar comes back as bytes; np.asarray would make it a
        # NUL-stripping "S" array.
        want, got = (np.array(x, dtype=object) if isinstance(x, bytes) else np.asarray(x)
                     for x in (want, got))
        # Quantized types: numpy records of one integer field (make_ndarray)
        # or the integers (Session.run).
        want, got = (x.view(x.dtype[0]) if x.dtype.names else x for x in (want, got))
        if want.dtype.kind in "SO" and got.dtype.kind in "SO":  # strings: bytes either way
            if want.shape != got.shape or want.ravel().tolist() != got.ravel().tolist():
                return f"differ: output {k} {got.ravel()[:4].tolist()}, TF's {want.ravel()[:4].tolist()}"
            continue
        if want.dtype != got.dtype or want.shape != got.shape:
            return f"differ: output {k} is {got.dtype}{list(got.shape)}, TF's {want.dtype}{list(want.shape)}"
        if want.dtype.kind == "c":  # compared as (real, imaginary) pairs
            want, got = (np.stack([x.real, x.imag], axis=-1) for x in (want, got))
        sixteen = want.dtype in (np.float16, NUMPY[types_pb2.DT_BFLOAT16])
        if sixteen:
            # Towerflow's CPU computes 16-bit nodes in float32 and rounds
            # once (kernels/cpu/float16_kernels.cc); TF's CPU kernels round
            # intermediates to 16 bits: a few units in the last place apart.
            tolerance = 8e-3 if want.dtype == np.float16 else 5e-2
            want, got = want.astype(np.float32), got.astype(np.float32)
        if want.dtype.kind == "f":
            if not sixteen:
                tolerance = {np.float32: 1e-5}.get(want.dtype.type, 1e-12)
            same_special = np.array_equal(np.isnan(want), np.isnan(got)) and np.array_equal(
                np.where(np.isinf(want), want, 0), np.where(np.isinf(got), got, 0))
            finite = np.isfinite(want) & np.isfinite(got)
            if not same_special or not np.allclose(got[finite], want[finite], rtol=tolerance,
                                                   atol=tolerance):
                return f"differ: output {k} {got.ravel()[:8].tolist()}, TF's {want.ravel()[:8].tolist()}"
        elif not np.array_equal(want, got):
            return f"differ: output {k} {got.ravel()[:8].tolist()}, TF's {want.ravel()[:8].tolist()}"
    return "agree"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--driver", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--ops", help="only these ops (comma-separated)")
    parser.add_argument("--verbose", action="store_true", help="a line per case")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    op_list_path = os.path.join(args.work, "op_defs.pb")
    subprocess.run([args.driver, "op_defs", f"--out={op_list_path}"], check=True)
    op_list = op_def_pb2.OpList()
    with open(op_list_path, "rb") as f:
        op_list.ParseFromString(f.read())
    only = set(args.ops.split(",")) if args.ops else None

    cases, skipped, towerflow_only = [], {}, []
    for op_def in op_list.op:
        if only is not None and op_def.name not in only:
            continue
        if op_def_registry.get(op_def.name) is None:
            towerflow_only.append(op_def.name)
            continue
        why = not_compared(op_def)
        if why is None:
            cases += narrow_int_cases(op_def) + complex_cases(op_def)
        if why is None and op_def.name in CASES:
            cases += hand_cases(op_def)
            continue
        if why is None:
            generated, why = generated_cases(op_def)
            if generated is not None:
                cases += generated
                continue
        skipped[op_def.name] = why

    config = session_config()
    theirs = [run_tensorflow(c, config) for c in cases]
    mine = run_towerflow(args.driver, args.work, cases)
    verdicts = collections.defaultdict(list)  # op -> [(case, verdict)]
    for case, t, m in zip(cases, theirs, mine):
        verdicts[case.op].append((case, compare(case, t, m)))

    totals = collections.Counter()
    unexpected, stale = [], []
    for op, results in sorted(verdicts.items()):
        counts = collections.Counter(v.split(":")[0] for _, v in results)
        totals.update(counts)
        values = counts["agree"]
        print(f"{op}: {len(results)} cases: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
              + ("" if values else " -- NO CASE WITH VALUES"))
        for case, verdict in results:
            listed = KNOWN_DIFFERENCES.get(case.key) or CPU_DEPENDENT.get(case.key)
            if verdict.startswith("differ"):
                if listed is None:
                    unexpected.append((case.key, verdict))
                print(f"  {case.key}: {verdict}" + (f" [known: {listed}]" if listed else ""))
            elif case.key in KNOWN_DIFFERENCES:
                stale.append(case.key)
            elif args.verbose:
                print(f"  {case.key}: {verdict}")
    for op, why in sorted(skipped.items()):
        print(f"{op}: not compared: {why}")
    ops = len(verdicts)
    print(f"{ops} ops, {len(cases)} cases: {totals['agree'] + totals['agree on the error']} agree "
          f"({totals['agree']} on values, {totals['agree on the error']} on the error), "
          f"{totals['differ']} differ, {totals['TF-only']} TF-only, "
          f"{totals['Towerflow-only']} Towerflow-only; {len(skipped)} ops not compared, "
          f"{len(towerflow_only)} ops TensorFlow lacks ({', '.join(towerflow_only)})")
    for key in stale:
        print(f"KNOWN_DIFFERENCES lists {key}, which no longer differs: remove it")
    if unexpected:
        print(f"{len(unexpected)} differences not in KNOWN_DIFFERENCES")
    return 1 if unexpected or stale else 0


if __name__ == "__main__":
    sys.exit(main())
