#!/usr/bin/env bash
# Runs each test binary (the arguments) under mpirun on this machine with 2
# and then 3 processes (or the counts of a first argument --np=3,5); fails
# when any process fails. Open MPI refuses to
# run as root unless told (CI runs as root), and --oversubscribe lets 3
# processes share 2 cores.
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Shared memory and loopback only; no network interfaces are probed.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
# Bazel's per-test files would be written by every process at once.
unset XML_OUTPUT_FILE TEST_PREMATURE_EXIT_FILE GTEST_OUTPUT
counts="2 3"
if [[ "${1:-}" == --np=* ]]; then
  counts="${1#--np=}"
  counts="${counts//,/ }"
  shift
fi
for binary in "$@"; do
  for np in $counts; do
    echo "=== mpirun -np $np $binary"
    mpirun -np "$np" --oversubscribe "$binary"
  done
done
