# Simulated hosts on one machine, for tests and benchmarks across machine
# boundaries (sourced). Each "host" is a network namespace with its own
# address (10.77.<net>.<i+1>) on a bridge, its own hostname (a UTS
# namespace), and nothing shared with the others but the file system; mpirun
# starts in host 0 and reaches the others through a launcher script
# (ip netns exec) in place of ssh, and Open MPI talks TCP between them only
# (btl self,tcp: no shared memory, so Towerflow sees one process per host).
#
#   source distribute/testing/simulated_hosts.sh
#   hosts_can_run || { echo "SKIP: $hosts_why"; exit 0; }
#   hosts_up 3                    # hosts_down runs at exit (and on INT, TERM)
#   hosts_mpirun 3 program args   # one process per host
#   link_down 1; link_up 1; link_slow 1 "rate 20mbit ..."; kill_host 1
#
# Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN), ip, unshare and a kernel with
# network namespaces, veth and bridges.
hosts_prefix="tw$$"
hosts_net=$(( $$ % 200 + 20 ))
hosts_count=0
hosts_dir=""
hosts_why=""

# Whether namespaces can be made here; $hosts_why says why not.
hosts_can_run() {
  local probe="${hosts_prefix}p" command
  for command in ip unshare mpirun tc; do
    command -v "$command" > /dev/null || { hosts_why="no $command"; return 1; }
  done
  if ! ip netns add "$probe" 2> /dev/null; then
    hosts_why="cannot make a network namespace (ip netns add needs root)"
    return 1
  fi
  ip netns del "$probe"
  if ! ip link add "${hosts_prefix}b" type bridge 2> /dev/null; then
    hosts_why="cannot make a bridge"
    return 1
  fi
  ip link del "${hosts_prefix}b"
  return 0
}

hosts_address() { echo "10.77.${hosts_net}.$(( $1 + 1 ))"; }

# hosts_up N: N hosts on one bridge, and the launcher.
hosts_up() {
  hosts_count="$1"
  hosts_dir="$(mktemp -d)"
  trap hosts_down EXIT
  trap 'hosts_down; exit 143' INT TERM
  ip link add "${hosts_prefix}b" type bridge
  ip link set "${hosts_prefix}b" up
  local i
  for (( i = 0; i < hosts_count; ++i )); do
    ip netns add "${hosts_prefix}h$i"
    ip link add "${hosts_prefix}v$i" type veth peer name eth0 netns "${hosts_prefix}h$i"
    ip link set "${hosts_prefix}v$i" master "${hosts_prefix}b" up
    ip -n "${hosts_prefix}h$i" addr add "$(hosts_address "$i")/24" dev eth0
    ip -n "${hosts_prefix}h$i" link set eth0 up
    ip -n "${hosts_prefix}h$i" link set lo up
  done
  # Open MPI's rsh agent: launcher [ssh options] HOST COMMAND...
  {
    echo '#!/usr/bin/env bash'
    echo 'while [[ "$1" == -* ]]; do shift; done'
    echo 'host="$1"; shift'
    echo 'case "$host" in'
    for (( i = 0; i < hosts_count; ++i )); do
      echo "  $(hosts_address "$i")) i=$i;;"
    done
    echo '  *) echo "launcher: no simulated host $host" >&2; exit 1;;'
    echo 'esac'
    echo "exec ip netns exec ${hosts_prefix}h\$i unshare --uts sh -c \"hostname host\$i; exec \$*\""
  } > "$hosts_dir/launcher"
  chmod +x "$hosts_dir/launcher"
}

hosts_down() {
  local i
  for (( i = 0; i < hosts_count; ++i )); do
    # Whatever still runs in a host goes with it.
    ip netns pids "${hosts_prefix}h$i" 2> /dev/null | xargs -r kill -9 2> /dev/null
    ip netns del "${hosts_prefix}h$i" 2> /dev/null
  done
  ip link del "${hosts_prefix}b" 2> /dev/null
  [ -n "$hosts_dir" ] && rm -rf "$hosts_dir"
  hosts_count=0
}

# hosts_mpirun NP PROGRAM ARGS...: NP processes round robin over the hosts,
# mpirun in host 0; TCP between hosts (and within one, where NP > hosts).
hosts_mpirun() {
  local np="$1"
  shift
  local list="" i
  for (( i = 0; i < hosts_count; ++i )); do list="${list:+$list,}$(hosts_address "$i"):8"; done
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    ip netns exec "${hosts_prefix}h0" unshare --uts sh -c 'hostname host0; exec "$@"' mpirun \
    mpirun -np "$np" --host "$list" --map-by node --oversubscribe \
    --mca plm_rsh_agent "$hosts_dir/launcher" \
    --mca btl self,tcp --mca btl_tcp_if_include "10.77.${hosts_net}.0/24" \
    --mca oob_tcp_if_include "10.77.${hosts_net}.0/24" "$@"
}

# The link of host I: down, up, or shaped by tc (netem where the kernel has
# it, else a token bucket's rate limit).
link_down() { ip link set "${hosts_prefix}v$1" down; }
link_up() { ip link set "${hosts_prefix}v$1" up; }
link_slow() {
  # link_slow I: 5 ms each way and 200 Mbit/s where netem exists, else the
  # 200 Mbit/s alone; prints which.
  local dev="${hosts_prefix}v$1"
  if tc qdisc add dev "$dev" root netem delay 5ms rate 200mbit 2> /dev/null; then
    echo "netem delay 5ms rate 200mbit"
  else
    tc qdisc add dev "$dev" root tbf rate 200mbit burst 256kb latency 50ms
    echo "tbf rate 200mbit"
  fi
}
# Every process of host I, SIGKILLed.
kill_host() { ip netns pids "${hosts_prefix}h$1" | xargs -r kill -9; }
