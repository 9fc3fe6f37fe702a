#!/usr/bin/env bash
# A process that dies, fails or hangs mid-training stops the job instead of
# leaving the others waiting in a collective; the job exits non-zero, the
# test ends (it does not hang) and checks what the user is told.
#   dying_rank_test.sh <dying_rank_main>
set -uo pipefail
# The hanging process is found after 2 s of waiting.
export TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS=2
# shellcheck source=distribute/job_failure_check.sh
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/distribute/job_failure_check.sh"
program="$1"
# mpirun names the dead rank.
check die "rank 2"
# Each of the others returns the error of rank 2 (process 2 of 3).
check fail "^rank 0: ABORTED: AllReduceSum on process 0 stopped: process 2 of 3 failed: INTERNAL: disk full" \
  "^rank 1: ABORTED: AllReduceSum on process 1 stopped: process 2 of 3 failed: INTERNAL: disk full"
# The others time out; whichever gives up first names the silent rank 2.
check hang "^rank 0: (DEADLINE_EXCEEDED|ABORTED): .*waited .* in AllReduceSum \(collective #[0-9]+\) for the other processes; process 2 did not answer" \
  "^rank 1: (DEADLINE_EXCEEDED|ABORTED): .*process 2 did not answer"
# The Estimator: the failing process's Train returns its hook's error, the
# others' Train returns Aborted with it.
check train "^rank 2: INTERNAL: disk full" \
  "^rank 0: ABORTED: .* on process 0 stopped: process 2 of 3 failed: INTERNAL: disk full" \
  "^rank 1: ABORTED: .* on process 1 stopped: process 2 of 3 failed: INTERNAL: disk full"
[ "$failed" -eq 0 ] && echo "PASS"
exit "$failed"
