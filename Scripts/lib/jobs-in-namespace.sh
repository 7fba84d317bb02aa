# Shared by the scripts that run five nodes in a network namespace of their own under a
# long map and a real-time bike job, and check that both end with every result once and
# the bikes conserved (Scripts/test-keyring-rotation, Scripts/test-rolling-upgrade,
# Scripts/test-replica-replacement).
# Sourced inside the namespace by a script that has `set -euo pipefail` and sets `dir`
# (the work folder) and `cluster` (the cluster's name). Every process started here is
# recorded in `pids` and stopped by its PID when the sourcing script exits; every wait
# is bounded.

scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pids=()
stop_all() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2> /dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 60); do kill -0 "$pid" 2> /dev/null || break; sleep 0.05; done
    kill -KILL "$pid" 2> /dev/null || true
  done
}
trap stop_all EXIT
ip link set lo up
fail() { echo "FAIL: $*"; exit 1; }

# start_node BINARY INDEX NAME [ARGS...]: a node of `cluster`, its stdout in
# $dir/nodeINDEX.out and its log appended to $dir/nodeINDEX.log; its PID in node_pid[INDEX].
declare -A node_pid
start_node() {
  local binary=$1 index=$2 name=$3
  shift 3
  : > "$dir/node$index.out"
  "$binary" node --name "$name" --cluster "$cluster" --slots 2 "$@" > "$dir/node$index.out" 2>> "$dir/node$index.log" &
  node_pid[$index]=$!
  pids+=($!)
}

# wait_ready INDEX: until node INDEX prints its ready line (at most 10 s).
wait_ready() {
  for _ in $(seq 1 200); do grep -q "^ready" "$dir/node$1.out" 2> /dev/null && return 0; sleep 0.05; done
  fail "node $1 did not start: $(tail -3 "$dir/node$1.log")"
}

# node_address INDEX: where node INDEX listens, from its ready line.
node_address() { sed -n 's/^ready name=[^ ]* address=\([^ ]*\).*/\1/p' "$dir/node$1.out"; }

# alive_count SPOKES ADDRESS: how many members the node at ADDRESS lists alive (itself included).
alive_count() {
  timeout 10 "$1" status --to "$2" --cluster "$cluster" --json 2> /dev/null | grep -o '"state" *: *"alive"' | wc -l
}

# wait_alive SPOKES ADDRESS COUNT: until the node at ADDRESS lists COUNT members alive (at most 20 s).
wait_alive() {
  for _ in $(seq 1 200); do [ "$(alive_count "$1" "$2")" -ge "$3" ] && return 0; sleep 0.1; done
  fail "the node at $2 does not list $3 members alive: $(timeout 10 "$1" status --to "$2" --cluster "$cluster" 2>&1 | tail -8)"
}

# start_jobs SPOKES ADDRESS TASKS SECONDS USERS PATHS [CLIENT ARGS...]: through the node at
# ADDRESS, a map of TASKS bench.sleep tasks of about SECONDS each (each input its own
# number) and a real-time bike job of USERS users x PATHS paths; their PIDs in map_pid
# and bikes_pid, their outputs in $dir. Both are bounded by `job_timeout` seconds (120).
start_jobs() {
  local spokes=$1 address=$2 tasks=$3 seconds=$4 users=$5 paths=$6
  shift 6
  map_tasks=$tasks; bike_users=$users
  python3 -c "import sys; n, s = int(sys.argv[1]), float(sys.argv[2]); print('\n'.join(f'{s + i / 1e6:.6f}' for i in range(n)))" \
    "$tasks" "$seconds" > "$dir/inputs.jsonl"
  timeout "${job_timeout:-120}" "$spokes" map bench.sleep --inputs "$dir/inputs.jsonl" --to "$address" --cluster "$cluster" "$@" \
    > "$dir/outputs.jsonl" 2> "$dir/map.log" &
  map_pid=$!; pids+=($map_pid)
  timeout "${job_timeout:-120}" "$spokes" submit --to "$address" --cluster "$cluster" --users "$users" --paths "$paths" \
    --move-time 0.05 --time-scale 1 --json "$@" > "$dir/bikes.json" 2> "$dir/bikes.log" &
  bikes_pid=$!; pids+=($bikes_pid)
}

# wait_jobs_started: until both clients have printed their job's id (the node accepted
# it; at most 20 s).
wait_jobs_started() {
  for log in map bikes; do
    for _ in $(seq 1 200); do grep -qE "(job|map)-[0-9a-f]{8}" "$dir/$log.log" 2> /dev/null && break; sleep 0.1; done
    grep -qE "(job|map)-[0-9a-f]{8}" "$dir/$log.log" || fail "the $log job did not start: $(tail -3 "$dir/$log.log")"
  done
}

# check_jobs: waits for both jobs; the map's outputs must be its inputs, once each and in
# order, and the bike job must complete every user with the bikes conserved.
check_jobs() {
  wait "$map_pid" || fail "the map failed: $(tail -5 "$dir/map.log")"
  wait "$bikes_pid" || fail "the bike job failed: $(tail -5 "$dir/bikes.log")"
  python3 - "$dir/inputs.jsonl" "$dir/outputs.jsonl" "$map_tasks" <<'PY' || fail "the map's outputs are not its $map_tasks inputs, once each, in order"
import sys
inputs, outputs = ([float(line) for line in open(path) if line.strip()] for path in sys.argv[1:3])
sys.exit(0 if inputs == outputs and len(outputs) == int(sys.argv[3]) else 1)
PY
  python3 - "$dir/bikes.json" "$bike_users" <<'PY' || fail "the bike job did not complete with the bikes conserved"
import json, sys
report, users = json.load(open(sys.argv[1])), int(sys.argv[2])
ok = report["completedUsers"] == users and report["bikesBefore"] == report["bikesAfter"] and not report["cancelled"]
print(f"  bike job: {report['completedUsers']} of {users} users, bikes {report['bikesBefore']} -> {report['bikesAfter']}, {report.get('retries', 0)} retries")
sys.exit(0 if ok else 1)
PY
  echo "  map: $map_tasks of $map_tasks results, each once"
}

# check_history SPOKES: the two clients' runs as a history (issue 29 §3,
# Scripts/check_history.py) against what every node still running keeps: no acknowledged
# job vanished, one report per job and one state on every node that lists it, what each
# client printed is the stored report. After check_jobs (it reads the clients' exits).
check_history() {
  local spokes=$1 history="$dir/history" index nodes=""
  mkdir -p "$history"
  ln -sf "$dir/map.log" "$history/map.err"; ln -sf "$dir/outputs.jsonl" "$history/map.out"
  ln -sf "$dir/bikes.log" "$history/bikes.err"; ln -sf "$dir/bikes.json" "$history/bikes.json"
  printf '%s map map\n%s bike bikes\n' "$map_pid" "$bikes_pid" > "$history/runs"
  printf '%s 0\n%s 0\n' "$map_pid" "$bikes_pid" > "$history/exits"
  for index in "${!node_pid[@]}"; do
    if kill -0 "${node_pid[$index]}" 2> /dev/null; then nodes+="$(node_address "$index"),"; fi
  done
  python3 "$scripts/check_history.py" gather "$history" --nodes "${nodes%,}" --cluster "$cluster" -- "$spokes"
  python3 "$scripts/check_history.py" check "$history/history.jsonl" > "$history/verdict.txt" \
    || fail "the history has violations: $(cat "$history/verdict.txt")"
  echo "  $(tail -n 1 "$history/verdict.txt")"
}

# check_nobody_died WHEN: no node logged a member declared dead.
check_nobody_died() {
  if grep -h -- "-> dead" "$dir"/node?.log; then fail "a member was declared dead $1"; fi
}

# check_only_leavers_died WHEN: every member a node declared dead was stopped on purpose
# a moment before: its own log says "stopping: telling peers we leave" at most 2 s before
# the death (its leave can arrive behind its connection's close, on another connection;
# the previous release then logs the member dead, and removes it). Any other death fails;
# those are listed.
check_only_leavers_died() {
  python3 - "$1" "$dir"/node?.log <<'PY' || exit 1
import re, sys
from datetime import datetime
def when(line): return datetime.fromisoformat(line.split()[0].replace("Z", "+00:00")).timestamp()
stops, deaths = {}, []
for path in sys.argv[2:]:
    for line in open(path, errors="replace"):
        stop = re.search(r"\[([^\]]+)\] stopping: telling peers we leave", line)
        if stop: stops.setdefault(stop.group(1), []).append(when(line))
        death = re.search(r"member ([^#\s]+)#\S+ \w+ -> dead", line)
        if death: deaths.append((death.group(1), when(line), line.strip()))
unexplained = [line for name, time, line in deaths if not any(0 <= time - stop <= 2 for stop in stops.get(name, []))]
for line in unexplained: print(f"FAIL: a member was declared dead {sys.argv[1]}: {line}")
if deaths and not unexplained:
    print(f"  {len(deaths)} death(s) seen of members stopped on purpose, their leave a moment behind the close")
sys.exit(1 if unexplained else 0)
PY
}
