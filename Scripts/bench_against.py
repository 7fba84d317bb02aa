#!/usr/bin/env python3
"""Reads the rounds of `Scripts/bench --against REV` and prints, per figure, every round
of both binaries, the ratio new/old and which one is better.

Each round of each binary is one `spokes bench --json` run's JSON lines, in a file named
`ROLE-ROUND.jsonl` (ROLE `old` or `new`, ROUND 1, 2, ...). The figures, their units and
which way is better come from bench_table.ROWS (one list for both tables). A round whose
measurement failed fails its figure: the ratio reads FAILED, never a ratio computed from
the rounds that did not fail, and the script exits 1.

The ratio is of the medians of the rounds. "Better" names the side whose median is
better, and says when the two sides' rounds overlap (the difference is within this run's
noise).

    bench_against.py --old-label 3795d1f --new-label 'this tree' DIR
"""
import argparse
import glob
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_table import FAILED, ROWS, cell, load, value  # noqa: E402


def rounds(directory, role):
    """The figures of each round of `role`, in round order."""
    found = []
    for path in glob.glob(os.path.join(directory, f"{role}-*.jsonl")):
        match = re.fullmatch(rf"{role}-(\d+)\.jsonl", os.path.basename(path))
        if match:
            found.append((int(match.group(1)), path))
    return [load([path])[0].get("spokes", {}) for _, path in sorted(found)]


def numbers(round_figures, key, field, scale):
    """Every round's value (None: not measured in that round; FAILED: failed)."""
    return [value({"spokes": figures}, "spokes", key, field, scale) for figures in round_figures]


def compare(old, new, better):
    """(ratio text, better text, failed) for two sides' rounds."""
    if FAILED in old or FAILED in new:
        return FAILED, "FAILED: a round's measurement failed", True
    old = [n for n in old if n is not None]
    new = [n for n in new if n is not None]
    if not old or not new:
        return "-", "not measured by both", False
    old_median, new_median = statistics.median(old), statistics.median(new)
    ratio = new_median / old_median
    new_wins = new_median > old_median if better == "higher" else new_median < old_median
    if new_median == old_median:
        verdict = "the same"
    else:
        verdict = ("new" if new_wins else "old") + f" by {abs(ratio - 1) * 100:.0f}%"
    if min(new) <= max(old) and min(old) <= max(new):
        verdict += " (rounds overlap: within noise)"
    return f"{ratio:.2f}", verdict, False


def render(old_rounds, new_rounds, old_label, new_label):
    header = ["figure", "unit", old_label, new_label, "new/old", "better"]
    rows, failed = [], False
    for label, key, field, scale, unit, better, _ in ROWS:
        old = numbers(old_rounds, key, field, scale)
        new = numbers(new_rounds, key, field, scale)
        if all(n is None for n in old + new):
            continue
        ratio, verdict, broken = compare(old, new, better)
        failed = failed or broken
        rows.append([label, unit, " / ".join(cell(n, unit) for n in old), " / ".join(cell(n, unit) for n in new), ratio,
                     f"{verdict} ({better} is better)"])
    widths = [max(len(str(row[i])) for row in [header] + rows) for i in range(len(header))]
    lines = ["| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |" for row in [header] + rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return lines, failed, not rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-label", default="old")
    parser.add_argument("--new-label", default="new")
    parser.add_argument("directory")
    arguments = parser.parse_args()
    old_rounds, new_rounds = rounds(arguments.directory, "old"), rounds(arguments.directory, "new")
    lines, failed, empty = render(old_rounds, new_rounds, arguments.old_label, arguments.new_label)
    print("\n".join(lines))
    print(f"each cell: every round ({len(old_rounds)} old, {len(new_rounds)} new), in order; new/old: the ratio of the medians")
    if empty:
        print("bench --against: no figure was measured", file=sys.stderr)
        return 1
    if failed:
        print("bench --against: a measurement failed (FAILED above): no ratio is given for it", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
