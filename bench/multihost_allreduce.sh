#!/usr/bin/env bash
# bench/mpi_allreduce across two simulated hosts (network namespaces joined
# by veth links on a bridge, Open MPI on TCP: distribute/testing/simulated_hosts.sh),
# one process per host, beside raw MPI on the same link; first the link as
# the kernel makes it, then both hosts' links shaped (tc: netem's 5 ms
# delay and 200 Mbit/s where the kernel has netem, else a 200 Mbit/s token
# bucket); fewer runs than on one machine (100 and 10, then 50 of the small
# set alone). Needs root. From the repository root:
#   bazel build //bench:mpi_allreduce && bench/multihost_allreduce.sh
set -euo pipefail
source distribute/testing/simulated_hosts.sh
hosts_can_run || { echo "cannot simulate hosts here: $hosts_why" >&2; exit 1; }
program="$(realpath bazel-bin/bench/mpi_allreduce)"
hosts_up 2
echo "=== two hosts, veth links as they are"
hosts_mpirun 2 "$program" --rounds=100
echo "=== two hosts, both links shaped: $(link_slow 0; link_slow 1 > /dev/null)"
hosts_mpirun 2 "$program" --small_only --rounds=50
