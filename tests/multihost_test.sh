#!/usr/bin/env bash
# Across machine boundaries, simulated: 3 hosts, each a network namespace
# with its own address and hostname on one bridge, Open MPI between them on
# TCP only (distribute/testing/simulated_hosts.sh). Checks, one process per
# host:
#  1. the collectives (all-reduce, in pieces too, allgather, broadcast;
#     //distribute:cluster_test and mpi_ops_test) on 2 and 3 hosts;
#  2. training replicated over 2 hosts equals one process on the global
#     batch (//estimator:replicated_training_test); a parameter-server job
#     of 1 ps and 2 workers on 3 hosts (//estimator:ps_training_test);
#  3. the Estimator over 2 hosts (tests/multihost_main.cc) gives the same
#     bits over a slow link (tc: 5 ms delay where netem exists, a 200 Mbit/s
#     rate); a ResNet-style block with synchronised batch norm trained over 2
#     hosts equals one process on the whole batch;
#  4. faults mid-training, after the checkpoint of step 3: host 1's link
#     taken down (each process ends in DeadlineExceeded naming the other
#     within TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS, 15 s here), and host 1's processes
#     killed (mpirun names the host and ends the job); either way the job
#     exits non-zero and model_dir's last checkpoint loads.
# Skips, saying why, where network namespaces cannot be made (not root).
#   multihost_test.sh CLUSTER_TEST MPI_OPS_TEST REPLICATED_TEST PS_TEST MULTIHOST_MAIN TOWERFLOW
set -uo pipefail
# shellcheck source=distribute/testing/simulated_hosts.sh
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/distribute/testing/simulated_hosts.sh"
cluster_test="$(realpath "$1")" mpi_ops_test="$(realpath "$2")" replicated="$(realpath "$3")"
ps_test="$(realpath "$4")" main="$(realpath "$5")" tool="$(realpath "$6")"
unset XML_OUTPUT_FILE TEST_PREMATURE_EXIT_FILE GTEST_OUTPUT
# Open MPI refuses root unless told (CI runs as root); a program linked with
# it but started without mpirun (the towerflow tool) asks too.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if ! hosts_can_run; then
  echo "SKIPPED: simulated hosts need network namespaces, and $hosts_why"
  exit 0
fi
# Long enough for a loaded machine's slowest process to reach each
# collective; the faults' jobs wait less (below).
export TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS=60
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
export TEST_TMPDIR="$tmp"
failed=0
fail() { echo "FAIL: $*"; failed=1; }
pass_env=(-x TEST_TMPDIR -x TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS -x MULTIHOST_MODEL_DIR)

# Waits (for an event, not a duration) until the command $1 succeeds; gives up after
# 120 s so that a broken job cannot hang the test.
wait_for() {
  local i
  for (( i = 0; i < 1200; ++i )); do
    if eval "$1"; then return 0; fi
    sleep 0.1
  done
  return 1
}

hosts_up 3
echo "hosts: $(hosts_address 0) $(hosts_address 1) $(hosts_address 2)"

# 1. Collectives.
for np in 2 3; do
  for binary in "$cluster_test" "$mpi_ops_test"; do
    echo "=== $np hosts: $(basename "$binary")"
    hosts_mpirun "$np" "${pass_env[@]}" "$binary" > "$tmp/out.txt" 2>&1 ||
      { cat "$tmp/out.txt"; fail "$(basename "$binary") on $np hosts"; }
    grep -c "^\[  PASSED  \]" "$tmp/out.txt" | grep -qx "$np" ||
      fail "$(basename "$binary") on $np hosts: not every process passed"
  done
done

# 2. Training equal to one process; a ps job.
echo "=== 2 hosts: replicated training"
hosts_mpirun 2 "${pass_env[@]}" "$replicated" > "$tmp/out.txt" 2>&1 ||
  { cat "$tmp/out.txt"; fail "replicated training over 2 hosts"; }
echo "=== 3 hosts: 1 ps + 2 workers"
hosts_mpirun 3 "${pass_env[@]}" "$ps_test" > "$tmp/out.txt" 2>&1 ||
  { cat "$tmp/out.txt"; fail "the ps job over 3 hosts"; }

# 3. The Estimator over a fast and a slow link: the same bits.
train() {  # train NAME STEPS [MARKER]: mpirun's output in $tmp/NAME.txt, each
  # process's also in $tmp/NAME.out/1/rank.R/ (written on its host: a cut
  # link holds back what mpirun forwards)
  local name="$1"
  shift
  MULTIHOST_MODEL_DIR="$tmp/$name" hosts_mpirun 2 "${pass_env[@]}" \
    --output-filename "$tmp/$name.out" "$main" "$@" > "$tmp/$name.txt" 2>&1
}
echo "=== 2 hosts: the Estimator, 20 steps"
train fast 20 || { cat "$tmp/fast.txt"; fail "training over 2 hosts"; }
shaping="$(link_slow 1)"
echo "=== 2 hosts, host 1's link slowed ($shaping): the Estimator, 20 steps"
train slow 20 || { cat "$tmp/slow.txt"; fail "training over a slow link"; }
tc qdisc del dev "${hosts_prefix}v1" root
fast_w="$(grep "^w = " "$tmp/fast.txt")"
slow_w="$(grep "^w = " "$tmp/slow.txt")"
echo "fast: $fast_w; slow: $slow_w"
[ -n "$fast_w" ] && [ "$fast_w" = "$slow_w" ] || fail "the slow link's w ($slow_w) is not the fast one's ($fast_w)"
[ "$(grep -c "finished all its steps" "$tmp/slow.txt")" -eq 2 ] || fail "a process did not finish"

# A ResNet-style block with synchronised batch norm over 2 hosts: the
# variables of one process on the whole batch (float tolerance; with the
# batch norms synchronised within each process only they differ by 10x).
echo "=== 2 hosts: a ResNet-style block, synchronised batch norm, against one process"
MULTIHOST_MODEL_DIR="$tmp/resnet" hosts_mpirun 2 "${pass_env[@]}" "$main" resnet 5 \
  > "$tmp/resnet.txt" 2>&1 || { cat "$tmp/resnet.txt"; fail "the ResNet-style block over 2 hosts"; }
compared="$(grep "^resnet: " "$tmp/resnet.txt")"
echo "$compared"
awk '/^resnet: / { exit !($3 >= 20 && $NF < 1e-3) }' "$tmp/resnet.txt" ||
  fail "the ResNet-style block over 2 hosts is not one process's: $compared"

# 4. Faults after step 3's checkpoint.
broken_job() {  # broken_job NAME FAULT: trains until the marker, then FAULT
  local name="$1" fault="$2"
  rm -f "$tmp/$name.marker"
  TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS=15 train "$name" 1000000 "$tmp/$name.marker" &
  local job=$!
  wait_for "[ -e '$tmp/$name.marker' ]" || fail "$name: training never reached step 3"
  local since=$SECONDS
  "$fault"
  if [ "$fault" = link_down_1 ]; then
    # Each process ends with its error; then the link comes back so that
    # mpirun can reach host 1's daemon and end the job.
    wait_for "grep -qs '^rank 0: ' '$tmp/$name.out/1/rank.0/stderr' &&
              grep -qs '^rank 1: ' '$tmp/$name.out/1/rank.1/stderr'" ||
      fail "$name: not every process reported an error"
    echo "$name: both processes reported their error $(( SECONDS - since )) s after the fault"
    link_up 1
  fi
  wait "$job"
  local status=$?
  echo "=== $name (exit $status)"
  grep -v "Saving checkpoints" "$tmp/$name.txt"
  [ "$status" -ne 0 ] || fail "$name: the job exited 0"
  ! grep -q "finished all its steps" "$tmp/$name.txt" || fail "$name: a process finished"
  # The last checkpoint (step 3 or later) loads: its list, w's values.
  if "$tool" checkpoint "$tmp/$name" > "$tmp/$name.ckpt.txt" 2>&1 &&
     "$tool" checkpoint "$tmp/$name" --tensor w >> "$tmp/$name.ckpt.txt" 2>&1; then
    cat "$tmp/$name.ckpt.txt"
    grep -qE "^Checkpoint .*/model\.ckpt-([3-9]|[1-9][0-9]+): 2 tensors" "$tmp/$name.ckpt.txt" ||
      fail "$name: the last checkpoint is not of step 3 or later"
    grep -qE "^ *w +double +\[2,1\]" "$tmp/$name.ckpt.txt" || fail "$name: the checkpoint has no w"
    grep -qE "^w: double \[2,1\]$" "$tmp/$name.ckpt.txt" || fail "$name: w's values do not load"
  else
    cat "$tmp/$name.ckpt.txt"
    fail "$name: the last checkpoint does not load"
  fi
}
link_down_1() { link_down 1; }
kill_host_1() { kill_host 1; }
broken_job down link_down_1
for rank in 0 1; do
  grep -qE "^rank $rank: DEADLINE_EXCEEDED: .*process $(( 1 - rank )) did not answer" \
    "$tmp/down.out/1/rank.$rank/stderr" || fail "link down: rank $rank does not name the other"
done
broken_job killed kill_host_1
grep -qE "Remote daemon: .* on node $(hosts_address 1)" "$tmp/killed.txt" ||
  fail "killed host: mpirun does not name host 1 ($(hosts_address 1))"

[ "$failed" -eq 0 ] && echo "PASS"
exit "$failed"
