#!/usr/bin/env bash
# A ps or worker task that dies or hangs mid-training ends the job instead of
# leaving the others waiting: the job exits non-zero, the test ends (it does
# not hang), and the output names the task.
#   ps_dying_task_test.sh <ps_dying_task_main>
set -uo pipefail
# A request the hung ps does not answer fails after 2 s.
export TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS=2
# shellcheck source=distribute/job_failure_check.sh
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/distribute/job_failure_check.sh"
program="$1"
# mpirun names the dead process: the ps is rank 0, worker 1 is rank 2.
check kill_ps "rank 0"
check kill_worker "rank 2"
# A worker's RunGraph on the stopped ps times out, naming the ps task.
check hang_ps "^rank [12]: DEADLINE_EXCEEDED: task /job:ps/replica:0/task:0 \(process 0\) did not answer RunGraph within 2s"
[ "$failed" -eq 0 ] && echo "PASS"
exit "$failed"
