#!/usr/bin/env python3
"""Reads what Scripts/test-partitions gathered: the nodes' logs and the JSON of
`spokes submit` and `spokes status`, and prints figures the script compares.

Every node logs its membership transitions on stderr (NodeCommand.describe), one line
each, with an ISO-8601 UTC time to the millisecond (LogRecord.line):

    2026-03-04T22:58:46.123Z INFO    [n1] member n3#1a2b at 198.18.21.3:7000 is joining
    2026-03-04T22:58:46.123Z INFO    [n1] member n3#1a2b alive -> suspect
    2026-03-04T22:58:46.123Z INFO    [n1] member n3#1a2b removed

The observer is the label in brackets, the peer the name before '#'. Times given on the
command line are Unix seconds (date +%s.%N). Standard library only.
"""
import glob
import json
import os
import re
import sys
from datetime import datetime, timezone

LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) +\S+ +\[([^\]]+)\] member (\S+?)#\S+ (.*)$")
CHANGED = re.compile(r"^(\w+) -> (\w+)$")
JOINED = re.compile(r"^at \S+ is (\w+)$")


def parse_time(text):
    form = "%Y-%m-%dT%H:%M:%S.%fZ" if "." in text else "%Y-%m-%dT%H:%M:%SZ"
    return datetime.strptime(text, form).replace(tzinfo=timezone.utc).timestamp()


def events(folder):
    """Every membership event in the nodes' logs: (time, observer, peer, from, to), by
    time. `from` is None for a member that joined; `to` is 'removed' for one forgotten."""
    found = []
    for path in sorted(glob.glob(os.path.join(folder, "n*.log"))):
        with open(path, errors="replace") as log:
            for line in log:
                match = LINE.match(line.rstrip("\n"))
                if not match:
                    continue
                stamp, observer, peer, rest = match.groups()
                changed, joined = CHANGED.match(rest), JOINED.match(rest)
                if changed:
                    event = (changed.group(1), changed.group(2))
                elif joined:
                    event = (None, joined.group(1))
                elif rest == "removed":
                    event = (None, "removed")
                else:
                    continue
                found.append((parse_time(stamp), observer, peer) + event)
    found.sort(key=lambda e: e[0])
    return found


def cut_times(path):
    """When each node's cut began: lines 'NODE UNIX-TIME' (the first for a node counts)."""
    times = {}
    with open(path) as file:
        for line in file:
            node, time = line.split()
            times.setdefault(node, float(time))
    return times


def first_dead(folder, cuts, side_a, side_b):
    """For every pair across the cut (each way), seconds from the observer's own cut (its
    DROP rule started to go in: from then on it hears nothing from the other side) to the
    first '-> dead'."""
    pairs = [(a, b) for a in side_a for b in side_b] + [(b, a) for a in side_a for b in side_b]
    delays = {}
    for time, observer, peer, _, to in events(folder):
        cut = cuts.get(observer)
        if cut is not None and time >= cut and to == "dead" and (observer, peer) in pairs and (observer, peer) not in delays:
            delays[(observer, peer)] = time - cut
    for observer, peer in pairs:
        seen = delays.get((observer, peer))
        print(f"pair {observer}->{peer} " + (f"{seen:.3f}" if seen is not None else "never"))
    missing = sum(1 for pair in pairs if pair not in delays)
    print(f"max {max(delays.values()):.3f}" if delays else "max never")
    print(f"missing {missing}")


def all_alive(folder, since, nodes):
    """Seconds from `since` until every node lists every other as alive (replaying the
    logs from the start); 'never' when that did not happen by the end of the logs."""
    state = {}
    pairs = [(a, b) for a in nodes for b in nodes if a != b]

    def done():
        return all(state.get(pair) == "alive" for pair in pairs)

    seen_since = False
    for time, observer, peer, _, to in events(folder):
        if time >= since and not seen_since:
            seen_since = True
            if done():
                print("after 0.000")
                return
        state[(observer, peer)] = None if to == "removed" else to
        if seen_since and done():
            print(f"after {time - since:.3f}")
            return
    if not seen_since and done():
        print("after 0.000")
        return
    print("after never")
    for pair in pairs:
        if state.get(pair) != "alive":
            print(f"pair {pair[0]}->{pair[1]} {state.get(pair)}")


def flaps(folder, start, until):
    """Per pair, the transitions between `start` and `until`: how often it became suspect,
    came back from suspect, died, and came back from dead (rejoined)."""
    counts = {}
    for time, observer, peer, source, to in events(folder):
        if not start <= time <= until:
            continue
        count = counts.setdefault((observer, peer), {"suspect": 0, "suspect->alive": 0, "dead": 0, "dead->alive": 0})
        if to == "suspect":
            count["suspect"] += 1
        elif to == "dead":
            count["dead"] += 1
        elif to == "alive" and source == "suspect":
            count["suspect->alive"] += 1
        elif to == "alive":
            count["dead->alive"] += 1
    for (observer, peer), count in sorted(counts.items()):
        print(f"pair {observer}->{peer} " + " ".join(f"{key}={value}" for key, value in count.items()))
    print(f"max_recovered {max((c['suspect->alive'] for c in counts.values()), default=0)}")
    print(f"max_dead {max((c['dead'] for c in counts.values()), default=0)}")
    print(f"max_rejoined {max((c['dead->alive'] for c in counts.values()), default=0)}")
    print(f"deaths {sum(c['dead'] for c in counts.values())}")
    print(f"suspicions {sum(c['suspect'] for c in counts.values())}")


def recovery(folder, starts_path, node):
    """For short cuts of `node` (their start times, one per line): per cut, the latest
    moment, from the cut's start, at which a pair involving `node` was alive again
    (its first '-> alive' after the cut; pairs that never doubted are not counted)."""
    with open(starts_path) as file:
        starts = sorted(float(line.split()[-1]) for line in file if line.strip())
    found = events(folder)
    worst_all = None
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else float("inf")
        back = {}
        for time, observer, peer, _, to in found:
            if start <= time < end and node in (observer, peer) and to == "alive":
                back.setdefault((observer, peer), time - start)
        worst = max(back.values(), default=None)
        print(f"cut {index + 1} " + (f"{worst:.3f}" if worst is not None else "none"))
        if worst is not None:
            worst_all = worst if worst_all is None else max(worst_all, worst)
    print("worst " + (f"{worst_all:.3f}" if worst_all is not None else "none"))


def report(path):
    """users, completedUsers and conservation.holds of a `spokes submit --json` report."""
    try:
        with open(path) as file:
            data = json.load(file)
        users, completed = int(data["users"]), int(data["completedUsers"])
        holds = bool(data["conservation"]["holds"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"unreadable {type(error).__name__}")
        return
    ok = completed == users and holds
    spread = data.get("tasksPerNode") or {}
    tasks = " ".join(f"{node}:{count}" for node, count in sorted(spread.items()))
    print(f"{'ok' if ok else 'bad'} {completed}/{users} users, bikes {'conserved' if holds else 'NOT conserved'}"
          f", {data.get('retries', '?')} retries, {data.get('wallTime', 0):.1f} s, tasks {tasks or '?'}")


def alive(path):
    """How many members a `spokes status --json` lists as alive (0 when unreadable)."""
    try:
        with open(path) as file:
            members = json.load(file)["members"]
        print(sum(1 for member in members if member.get("state") == "alive"))
    except (OSError, ValueError, KeyError, TypeError):
        print(0)


def main(arguments):
    command, rest = arguments[0], arguments[1:]
    if command == "first-dead":
        first_dead(rest[0], cut_times(rest[1]), rest[2].split(","), rest[3].split(","))
    elif command == "all-alive":
        all_alive(rest[0], float(rest[1]), rest[2].split(","))
    elif command == "flaps":
        flaps(rest[0], float(rest[1]), float(rest[2]))
    elif command == "recovery":
        recovery(rest[0], rest[1], rest[2])
    elif command == "report":
        report(rest[0])
    elif command == "alive":
        alive(rest[0])
    elif command == "events":
        for time, observer, peer, source, to in events(rest[0]):
            print(f"{time:.3f} {observer} {peer} {source} -> {to}")
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv[1:])
