"""The ops TensorFlow has a CPU kernel for and Towerflow does not, by family.

  python3 tools/tf_interop/missing_ops.py \
      --driver=bazel-bin/tools/tf_interop/tf_interop_driver

Towerflow's registry comes from the driver (`op_defs`), TensorFlow's from
`tf.raw_ops` and its kernel registry, in the virtual environment
tools/tf_interop/run.sh makes. Each missing op is put in the first family
whose pattern matches its name; the README's "Not done yet" paragraph lists
these families. A development tool: CI does not run it.
"""
import argparse
import os
import re
import subprocess
import tempfile

# (family, pattern), first match wins.
FAMILIES = [
    ("tf.data", r"Dataset|Iterator|^Optional|SeedGenerator|MemoryCache|^DummyIterationCounter|"
                r"^DistributedSave|^(Un)?[cC]ompressElement|^GetElementAtIndex|^GetOptions|"
                r"^ListSnapshotChunks|^Snapshot|StatsAggregator|ThreadPoolHandle|^WindowOp$|"
                r"DatasetVariant|^ComputeBatchSize"),
    ("quantized inference", r"^Quantiz|^Requantiz|^UniformQuantiz|^UniformDequantize|"
                            r"^UniformRequantize|^RequantizationRange|^QuantizeDownAndShrinkRange"),
    ("queues, readers, barriers, staging areas", r"Queue|Reader|^Barrier|^Stage|^Unstage|"
                                                 r"^MapStage|^MapUnstage|^MapPeek|^MapSize|"
                                                 r"^MapClear|^MapIncompleteSize|^OrderedMap|"
                                                 r"^RecordInput|Accumulator"),
    ("ref-handle TensorArrays, tables and stacks", r"^TensorArray|HashTable|^InitializeTable|"
                                                   r"^LookupTable|^Stack|TemporaryVariable"),
    ("collectives", r"^Collective"),
    ("summary writers", r"^(Create|Close|Flush)?Summary|SummaryWriter|^Write\w*Summary$|"
                        r"^ImportEvent$"),
    ("sparse matrices and SparseTensor maps", r"SparseMatrix|CSRSparse|TensorsMap|"
                                              r"SerializeSparse|DeserializeSparse|"
                                              r"SerializeManySparse|DeserializeManySparse"),
    ("ragged tensors and counts", r"^Ragged|CountSparseOutput|^SparseBincount"),
    ("linear algebra", r"^Eig$|^SelfAdjointEig$|Tridiagonal|BandedTriangular|MatrixExponential|"
                       r"MatrixLogarithm|CholeskyGrad|^Batch(Matrix|Cholesky|SelfAdjoint|Svd)"),
    ("images", r"^Decode(Bmp|Gif|WebP|Jxl)$|EncodeJpegVariableQuality|ExtractGlimpse|"
               r"ExtractVolumePatches|NonMaxSuppressionWithOverlaps|^AdjustContrast$|^RandomCrop$"),
    ("random", r"ParameterizedTruncatedNormal|StatelessShuffle|StatelessSampleDistorted|"
               r"^StatefulStandardNormal$|RandomIndexShuffle|SobolSample"),
    ("parsing and protocol buffers", r"^ParseSingle|^ParseSequenceExample|DecodeJSONExample|"
                                     r"Proto|DecodeCompressed"),
    ("V1 checkpoints", r"^Save$|^SaveSlices$|^Restore$|^RestoreSlice$|^ShardedFilespec$"),
    ("Python, remote and batched functions", r"PyFunc|^SymbolicGradient$|^RemoteCall$|^For$|"
                                             r"^MapDefun$|^BatchFunction$|^Batch$|^Unbatch"),
    ("debugging, session handles, mutexes, maps", r"^Debug|^CheckPinned$|^Copy|^Abort$|"
                                                  r"^Timestamp$|^Fact$|^FakeParam$|SessionHandle|"
                                                  r"SessionTensor|^DeviceIndex$|^FileSystem|"
                                                  r"^ImmutableConst$|Mutex|TensorMap"),
    ("estimator-era and other", r"."),
]


def towerflow_ops(driver):
    from tensorflow.core.framework import op_def_pb2
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ops.pb")
        subprocess.run([driver, "op_defs", f"--out={path}"], check=True)
        ops = op_def_pb2.OpList()
        with open(path, "rb") as f:
            ops.ParseFromString(f.read())
    return {op.name for op in ops.op}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--driver", required=True)
    args = parser.parse_args()
    mine = towerflow_ops(args.driver)
    import tensorflow as tf
    from tensorflow.python.framework import kernels
    missing = []
    for name in sorted(n for n in dir(tf.raw_ops) if not n.startswith("_")):
        if name in mine:
            continue
        try:
            registered = kernels.get_registered_kernels_for_op(name).kernel
        except Exception:  # pylint: disable=broad-except
            registered = []
        if any(k.device_type == "CPU" for k in registered):
            missing.append(name)
    by_family = {family: [] for family, _ in FAMILIES}
    for name in missing:
        family = next(f for f, pattern in FAMILIES if re.search(pattern, name))
        by_family[family].append(name)
    print(f"{len(mine)} Towerflow ops; {len(missing)} ops with a TensorFlow CPU kernel missing")
    for family, names in by_family.items():
        if names:
            print(f"{family} ({len(names)}): {' '.join(names)}")


if __name__ == "__main__":
    main()
