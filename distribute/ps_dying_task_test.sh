#!/usr/bin/env bash
# A ps or worker task that dies or hangs mid-training ends the job instead of
# leaving the others waiting: the job exits non-zero, the test ends (it does
# not hang), and the output names the task.
#   ps_dying_task_test.sh <ps_dying_task_main>
set -uo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
# A request the hung ps does not answer fails after 2 s.
export TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS=2
unset XML_OUTPUT_FILE TEST_PREMATURE_EXIT_FILE GTEST_OUTPUT
failed=0
check() {  # mode, then the lines the output must hold
  local mode="$1"
  shift
  local out status
  out="$(mpirun -np 3 --oversubscribe "$program" "$mode" 2>&1)"
  status=$?
  echo "=== $mode (exit $status)"
  echo "$out"
  if [ "$status" -eq 0 ]; then
    echo "FAIL ($mode): the job exited 0 although a task stopped"
    failed=1
  fi
  if grep -q "finished all its steps" <<<"$out"; then
    echo "FAIL ($mode): a worker went on past the stopped task"
    failed=1
  fi
  for expected in "$@"; do
    if ! grep -qE "$expected" <<<"$out"; then
      echo "FAIL ($mode): the output does not say: $expected"
      failed=1
    fi
  done
}
program="$1"
# mpirun names the dead process: the ps is rank 0, worker 1 is rank 2.
check kill_ps "rank 0"
check kill_worker "rank 2"
# A worker's RunGraph on the stopped ps times out, naming the ps task.
check hang_ps "^rank [12]: DEADLINE_EXCEEDED: task /job:ps/replica:0/task:0 \(process 0\) did not answer RunGraph within 2s"
[ "$failed" -eq 0 ] && echo "PASS"
exit "$failed"
