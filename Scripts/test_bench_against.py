#!/usr/bin/env python3
"""Tests of Scripts/bench_against.py: ratios of medians, the better side, and a failed
round that fails its figure instead of giving a ratio.

    python3 Scripts/test_bench_against.py
"""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_against  # noqa: E402


def compared(old, new):
    """The rendered lines and the failed flag for rounds of entries per side."""
    with tempfile.TemporaryDirectory() as directory:
        for role, rounds in (("old", old), ("new", new)):
            for number, entries in enumerate(rounds, start=1):
                with open(os.path.join(directory, f"{role}-{number}.jsonl"), "w") as file:
                    file.writelines(json.dumps(dict(entry, system="spokes")) + "\n" for entry in entries)
        lines, failed, _ = bench_against.render(bench_against.rounds(directory, "old"), bench_against.rounds(directory, "new"), "old", "new")
        return lines, failed


def row(lines, label):
    cells = next(line for line in lines if line.startswith(f"| {label} ")).strip("|").split("|")
    return [cell.strip() for cell in cells]


def throughput(tasks_per_second):
    return {"figure": "noop_throughput", "tasks": 100, "tasks_per_second": tasks_per_second}


class BenchAgainstTests(unittest.TestCase):
    def test_the_ratio_is_of_the_medians_and_names_the_better_side(self):
        lines, failed = compared([[throughput(100)], [throughput(110)], [throughput(90)]], [[throughput(150)], [throughput(160)], [throughput(140)]])
        self.assertFalse(failed)
        self.assertEqual(row(lines, "no-op throughput, 2 workers")[2:5], ["100 / 110 / 90", "150 / 160 / 140", "1.50"])
        self.assertIn("new by 50%", row(lines, "no-op throughput, 2 workers")[5])

    def test_lower_is_better_for_a_round_trip_and_overlapping_rounds_are_noise(self):
        trip = lambda p50: {"figure": "round_trip", "calls": 10, "p50": p50, "p99": 0.001}
        lines, _ = compared([[trip(0.0004)], [trip(0.0006)]], [[trip(0.0005)], [trip(0.0007)]])
        verdict = row(lines, "round trip p50")[5]
        self.assertIn("old by 20%", verdict)
        self.assertIn("within noise", verdict)

    def test_a_failed_round_fails_its_figure_with_no_ratio(self):
        failed_round = {"figure": "noop_throughput", "error": "2 benchmark tasks failed"}
        lines, failed = compared([[throughput(100)], [throughput(100)]], [[throughput(150)], [failed_round]])
        self.assertTrue(failed)
        self.assertEqual(row(lines, "no-op throughput, 2 workers")[3:5], ["150 / FAILED", "FAILED"])

    def test_a_value_no_measurement_can_have_fails_too(self):
        lines, failed = compared([[throughput(0)]], [[throughput(150)]])
        self.assertTrue(failed)
        self.assertEqual(row(lines, "no-op throughput, 2 workers")[4], "FAILED")

    def test_the_capacity_table_is_compared_per_size(self):
        capacity = lambda pace, cpu: {"figure": "capacity_500", "users": 500, "simulate_pace": 0.99, "submit_pace": pace,
                                      "coordinator_microseconds_per_move": cpu}
        lines, failed = compared([[capacity(0.90, 90.0)]], [[capacity(0.94, 80.0)]])
        self.assertFalse(failed)
        self.assertEqual(row(lines, "capacity 500 users, 3 nodes, pace")[2:5], ["0.900", "0.940", "1.04"])
        self.assertEqual(row(lines, "capacity 500 users, coordinator cpu per move")[2:4], ["90.0", "80.0"])
        self.assertFalse(any(line.startswith("| capacity 1,000") for line in lines), "a size not measured has no row")


if __name__ == "__main__":
    unittest.main()
