# Machines on one host, for the scripts that set a cluster up as a user would on real
# machines (Scripts/test-init, Scripts/test-end-to-end): each machine is a network
# namespace with one LAN interface, eth0, on a bridge in a hub namespace, and every
# command run "on" it gets a mount namespace of its own (private: nothing outside sees
# it) in which the machine's own folders are mounted where a real machine has them, and
# a UTS namespace in which its host name is machine-I.
#
# Sourced by a script with root that sets, before calling anything:
#   machines_prefix   a short name unique to this run (namespace names start with it)
#   machines_work     a folder of the script's: machine I's folders are machines_work/mI/...
#   machine_mounts    ("FOLDER:PATH" ...): machine I sees machines_work/mI/FOLDER at PATH
#                     (FOLDER . is machines_work/mI itself). A PATH missing on the host is
#                     made empty here and removed by machines_remove.
#   machine_hidden    (PATH ...): folders every machine sees empty (a tmpfs), e.g. the
#                     Swift toolchain (toolchain_root, Scripts/lib/toolchain.sh)
#   machine_directory the folder commands start in on a machine (optional)
# Commands on a machine run with PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin.
# The sourcing script stops the processes it starts (by PID) before machines_remove.

machines_count=0
machines_made_paths=()

# machines_possible: true when network namespaces can be made here (root, iproute2).
machines_possible() {
  command -v ip > /dev/null && ip netns add "$machines_prefix-probe" 2> /dev/null && ip netns del "$machines_prefix-probe"
}

# machines_create COUNT SUBNET: the hub and COUNT machines; machine I's eth0 is
# SUBNET.I/24 with broadcast SUBNET.255 (SUBNET: three numbers, e.g. 198.51.100). A
# subnet in 127.0.0.0/8 gets route_localnet, so loopback-range addresses route on eth0.
machines_create() {
  local count=$1 subnet=$2 i ns mount path
  ip netns add "$machines_prefix-hub" || return 1
  machines_count=$count
  ip -n "$machines_prefix-hub" link add br0 type bridge
  ip -n "$machines_prefix-hub" link set br0 up
  for i in $(seq 1 "$count"); do
    ns="$machines_prefix-m$i"
    ip netns add "$ns"
    ip -n "$machines_prefix-hub" link add "v$i" type veth peer name eth0 netns "$ns"
    ip -n "$machines_prefix-hub" link set "v$i" master br0 up
    ip -n "$ns" link set lo up
    case "$subnet" in
      127.*) ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.route_localnet=1 net.ipv4.conf.eth0.route_localnet=1 ;;
    esac
    ip -n "$ns" addr add "$subnet.$i/24" broadcast "$subnet.255" dev eth0
    ip -n "$ns" link set eth0 up
    for mount in ${machine_mounts[@]+"${machine_mounts[@]}"}; do mkdir -p "$machines_work/m$i/${mount%%:*}"; done
  done
  for mount in ${machine_mounts[@]+"${machine_mounts[@]}"}; do
    path=${mount#*:}
    if [ ! -e "$path" ]; then mkdir -p "$path" && machines_made_paths+=("$path"); fi
  done
}

# machines_remove: the namespaces, and the mount points machines_create made.
machines_remove() {
  local i path
  for i in $(seq 1 "$machines_count"); do ip netns del "$machines_prefix-m$i" 2> /dev/null; done
  ip netns del "$machines_prefix-hub" 2> /dev/null
  for path in ${machines_made_paths[@]+"${machines_made_paths[@]}"}; do rmdir "$path" 2> /dev/null; done
  return 0
}

# machine I COMMAND...: COMMAND on machine I (its network namespace, a mount namespace
# of its own with the machine's folders and hidden folders mounted).
machine() { (machine_process "$@"); }

# machine_process I COMMAND...: the same, for `machine_process I ... &`: every step execs
# the next, so $! is the process itself (a node), to be stopped and waited for by that PID.
machine_process() {
  local i=$1 mount arguments=()
  shift
  for mount in ${machine_mounts[@]+"${machine_mounts[@]}"}; do arguments+=(bind "$machines_work/m$i/${mount%%:*}" "${mount#*:}"); done
  for mount in ${machine_hidden[@]+"${machine_hidden[@]}"}; do arguments+=(hide "$mount"); done
  exec ip netns exec "$machines_prefix-m$i" unshare --mount --uts --propagation private bash -c '
    set -e
    while [ "$1" != -- ]; do
      case "$1" in
        bind) mount --bind "$2" "$3"; shift 3 ;;
        hide) mount -t tmpfs -o size=1m,mode=0755 tmpfs "$2"; shift 2 ;;
      esac
    done
    cd "$2"
    echo "$3" > /proc/sys/kernel/hostname
    shift 3
    export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    exec "$@"' _ ${arguments[@]+"${arguments[@]}"} -- "${machine_directory:-/}" "machine-$i" "$@"
}
