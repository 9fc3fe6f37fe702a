#!/usr/bin/env bash
# A process that dies mid-training stops the job instead of leaving the
# others waiting in a collective: mpirun notices the death, names the rank
# and stops the other processes; the job exits non-zero. The test ends (it
# does not hang) and checks what the user is told. $1: dying_rank_main.
set -uo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
out="$(mpirun -np 3 --oversubscribe "$1" 2>&1)"
status=$?
echo "$out"
if [ "$status" -eq 0 ]; then
  echo "FAIL: the job exited 0 although rank 2 died"
  exit 1
fi
if ! grep -q "rank 2" <<<"$out"; then
  echo "FAIL: the output does not name rank 2"
  exit 1
fi
if grep -q "finished all its steps" <<<"$out"; then
  echo "FAIL: a process went on past the dead one"
  exit 1
fi
echo "PASS: the job stopped (exit $status) naming rank 2"
