#!/usr/bin/env python3
"""Reads the JSON lines of `spokes bench --json` and Scripts/bench_peers.py and prints one
table: a column per system, the ratios Spokes / peer, and each target of issue 7.

Each secured variant has its own column beside the open one, and the ratio of the two:
"spokes-sealed" (a cluster secret) with sealed/open, "dask-tls" (mutual TLS) with
tls/plain; the Spokes / peer ratios and the targets compare the open variants only.

The "python" column is the bike workload's Python port run in one process under asyncio,
with no cluster: the one-process counterpart of Spokes' own one-process figures, and the
same code the Dask and Ray rows run as tasks. Notes under the table give each bike
figure's users per system and why a figure is missing. A figure whose measurement failed
(an `error`, or no usable value) reads FAILED and fails its target: it never meets one.

    bench_table.py results/*.jsonl
"""
import json
import math
import sys

# (label, figure key, field, scale, unit, better: "higher"/"lower", target)
ROWS = [
    ("no-op throughput, 2 workers", "noop_throughput", "tasks_per_second", 1, "tasks/s", "higher", ("peer", 2.0)),
    ("cpu per no-op task, both nodes", "noop_cpu", "microseconds_per_task", 1, "us", "lower", ("below", 20.0)),
    ("round trip p50", "round_trip", "p50", 1000, "ms", "lower", ("peer", 0.5)),
    ("round trip p99", "round_trip", "p99", 1000, "ms", "lower", None),
    ("200 x 0.1 s on 1 node, wall", "scaling/1", "seconds", 1, "s", "lower", None),
    ("200 x 0.1 s on 2 nodes, wall", "scaling/2", "seconds", 1, "s", "lower", None),
    ("200 x 0.1 s on 4 nodes, wall", "scaling/4", "seconds", 1, "s", "lower", None),
    ("efficiency on 1 node", "scaling/1", "efficiency", 100, "%", "higher", None),
    ("efficiency on 2 nodes", "scaling/2", "efficiency", 100, "%", "higher", None),
    ("efficiency on 4 nodes", "scaling/4", "efficiency", 100, "%", "higher", ("absolute", 95.0)),
    ("cold start, 2 nodes to first result", "cold_start", "seconds", 1, "s", "lower", ("peer", 1 / 3)),
    ("idle worker resident memory", "memory", "worker_bytes", 1 / 1048576, "MiB", "lower", ("peer", 0.25)),
    ("idle head/scheduler resident memory", "memory", "head_bytes", 1 / 1048576, "MiB", "lower", None),
    ("recovery after a killed worker", "recovery", "seconds", 1, "s", "lower", ("below", 2.0)),
    ("bikes Milano, users x 20 paths, 1 process", "bikes_local", "steps_per_second", 1, "steps/s", "higher", None),
    ("bikes Milano, users x 20 paths, 3 workers", "bikes_cluster", "steps_per_second", 1, "steps/s", "higher", None),
    ("bikes time scale 1, 1 process, pace", "bikes_real_time", "pace", 1, "x", "higher", None),
] + [
    # `spokes bench --only capacity` (never in the default run): per size, the pace of
    # one process and of 3 nodes, and the coordinator's cpu per move.
    row
    for users in (500, 1000, 2000, 4000, 8000, 16000)
    for row in (
        (f"capacity {users:,} users, 1 process, pace", f"capacity_{users}", "simulate_pace", 1, "x", "higher", None),
        (f"capacity {users:,} users, 3 nodes, pace", f"capacity_{users}", "submit_pace", 1, "x", "higher", ("absolute", 0.95)),
        (f"capacity {users:,} users, coordinator cpu per move", f"capacity_{users}", "coordinator_microseconds_per_move", 1, "us", "lower", None),
    )
]

# The secured variants: (system, its open counterpart, the title of their ratio's column).
SECURED = [("spokes-sealed", "spokes", "sealed/open"), ("dask-tls", "dask", "tls/plain")]

# A figure that was attempted but has no usable value: it fails, and meets no target.
FAILED = "FAILED"


def load(paths):
    """The figures of every system (system -> figure key -> entry) and their versions."""
    figures, versions = {}, {}
    for path in paths:
        with open(path) as lines:
            for line in lines:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                entry = json.loads(line)
                key = entry["figure"] + (f"/{int(entry['nodes'])}" if "nodes" in entry else "")
                figures.setdefault(entry["system"], {})[key] = entry
                if "version" in entry:
                    versions[entry["system"]] = entry["version"]
    return figures, versions


def value(figures, system, key, field, scale=1.0):
    """The measured number; None when the figure was not run (or skipped, with a note);
    FAILED when the measurement failed: an error, or a value no measurement can have
    (every figure here is a positive, finite quantity, so 0 means nothing was read)."""
    entry = figures.get(system, {}).get(key)
    if entry is None:
        return None
    number = entry.get(field)
    if entry.get("error"):
        return FAILED
    if number is None:
        return None
    if not isinstance(number, (int, float)) or isinstance(number, bool) or not math.isfinite(number) or number <= 0:
        return FAILED
    return number * scale


def cell(number, unit):
    if number is None:
        return "-"
    if number == FAILED:
        return FAILED
    if unit in ("tasks/s", "steps/s"):
        return f"{number:,.0f}"
    if unit == "%":
        return f"{number:.1f}%"
    if unit in ("MiB", "us"):
        return f"{number:.1f}"
    return f"{number:.3f}"


def verdict(mine, peers, unit, better, target):
    """Whether Spokes met `target`: a failed measurement fails, never meets it."""
    if not target or mine is None:
        return ""
    if mine == FAILED:
        return "FAILED: the measurement failed"
    kind, goal = target
    if kind == "absolute":
        return f">= {goal:g}{unit}: " + ("met" if mine >= goal else "MISSED")
    if kind == "below":
        return f"< {goal:g} {unit}: " + ("met" if mine < goal else "MISSED")
    known = [number for number in peers if number not in (None, FAILED)]
    if not known:
        return "not compared: no peer measured it"
    best = max(known) if better == "higher" else min(known)
    ratio = mine / best
    if better == "higher":
        return f">= {goal:g}x best peer: {ratio:.2f}x " + ("met" if ratio >= goal else "MISSED")
    return f"<= {goal:.2f}x best peer: {ratio:.2f}x " + ("met" if ratio <= goal else "MISSED")


def render(figures, versions):
    """The table and the notes under it, as lines."""
    systems = [name for name in ("spokes", "spokes-sealed", "dask", "dask-tls", "ray", "python") if name in figures]
    # (secured, open, the ratio's column), shown when the secured variant was measured.
    secured = [pair for pair in SECURED if pair[0] in systems]
    peers = [name for name in systems if not name.startswith("spokes") and name not in {pair[0] for pair in SECURED}]
    header = ["figure", "unit"] + systems + [title for _, _, title in secured] + [f"spokes/{peer}" for peer in peers] + ["target"]
    rows = []

    def ratio(mine, theirs):
        usable = mine not in (None, FAILED) and theirs not in (None, FAILED)
        return f"{mine / theirs:.2f}" if usable else "-"

    for label, key, field, scale, unit, better, target in ROWS:
        numbers = {system: value(figures, system, key, field, scale) for system in systems}
        if all(number is None for number in numbers.values()):
            continue  # measured by no system in this run (Scripts/bench --sealing, --spokes)
        row = [label, unit] + [cell(numbers[system], unit) for system in systems]
        mine = numbers.get("spokes")
        for variant, plain, _ in secured:
            row.append(ratio(numbers.get(variant), numbers.get(plain)))
        for peer in peers:
            row.append(ratio(mine, numbers.get(peer)))
        row.append(verdict(mine, [numbers[peer] for peer in peers], unit, better, target))
        rows.append(row)

    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |" for row in rows]
    lines += [f"{system}: {version}" for system, version in versions.items()]
    bike_users = []
    for key, what in (("bikes_local", "1 process"), ("bikes_cluster", "3 workers"), ("bikes_real_time", "time scale 1")):
        counts = [f"{system} {int(figures[system][key]['users']):,}" for system in systems
                  if key in figures.get(system, {}) and figures[system][key].get("users") is not None]
        if counts:
            bike_users.append(f"{what}: " + ", ".join(counts))
    if bike_users:
        lines.append("bike users per run (the figures are per user-step, so they compare across counts): " + "; ".join(bike_users))
    for system in systems:
        for key, entry in figures[system].items():
            for field in ("error", "note"):
                if entry.get(field):
                    lines.append(f"{system} {key}: {entry[field]}")
        samples = figures[system].get("recovery", {}).get("samples")
        if samples and len(samples) > 1:
            lines.append(f"{system} recovery, every run: " + ", ".join(f"{sample:.3f} s" for sample in samples))
    return lines


if __name__ == "__main__":
    print("\n".join(render(*load(sys.argv[1:]))))
