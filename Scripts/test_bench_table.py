#!/usr/bin/env python3
"""Tests of Scripts/bench_table.py: a failed measurement reads FAILED and fails its target.

    python3 Scripts/test_bench_table.py
"""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_table  # noqa: E402


def table(*entries):
    """The rendered lines for these JSON-line entries, read from a file as the script does."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as file:
        for entry in entries:
            file.write(json.dumps(entry) + "\n")
    try:
        return bench_table.render(*bench_table.load([file.name]))
    finally:
        os.unlink(file.name)


def row(lines, label):
    cells = next(line for line in lines if line.startswith(f"| {label} ")).strip("|").split("|")
    return [cell.strip() for cell in cells]


MiB = 1048576


class BenchTableTests(unittest.TestCase):
    def test_a_measured_figure_meets_or_misses_its_target(self):
        lines = table({"system": "spokes", "figure": "memory", "worker_bytes": 24 * MiB, "head_bytes": 25 * MiB},
                      {"system": "dask", "figure": "memory", "worker_bytes": 100 * MiB, "head_bytes": 50 * MiB},
                      {"system": "spokes", "figure": "recovery", "seconds": 2.5})
        memory = row(lines, "idle worker resident memory")
        self.assertEqual(memory[2:5], ["24.0", "100.0", "0.24"])
        self.assertEqual(memory[-1], "<= 0.25x best peer: 0.24x met")
        self.assertEqual(row(lines, "recovery after a killed worker")[-1], "< 2 s: MISSED")

    def test_a_failed_measurement_fails_its_figure_and_never_meets_the_target(self):
        lines = table({"system": "spokes", "figure": "memory", "error": "cannot read VmRSS from /proc/8/status"},
                      {"system": "dask", "figure": "memory", "worker_bytes": 100 * MiB, "head_bytes": 50 * MiB},
                      {"system": "spokes", "figure": "recovery", "error": "no task started again after the kill"})
        memory = row(lines, "idle worker resident memory")
        self.assertEqual(memory[2], "FAILED")
        self.assertEqual(memory[4], "-", "no ratio from a failed measurement")
        self.assertEqual(memory[-1], "FAILED: the measurement failed")
        self.assertEqual(row(lines, "recovery after a killed worker")[-1], "FAILED: the measurement failed")
        self.assertIn("spokes memory: cannot read VmRSS from /proc/8/status", lines)

    def test_zero_bytes_is_a_failed_measurement_not_a_small_one(self):
        # What residentBytes used to report when /proc could not be read.
        lines = table({"system": "spokes", "figure": "memory", "worker_bytes": 0, "head_bytes": 0},
                      {"system": "dask", "figure": "memory", "worker_bytes": 100 * MiB, "head_bytes": 50 * MiB})
        memory = row(lines, "idle worker resident memory")
        self.assertEqual(memory[2], "FAILED")
        self.assertNotIn("met", memory[-1])

    def test_a_peer_that_failed_is_not_the_one_compared_with(self):
        lines = table({"system": "spokes", "figure": "memory", "worker_bytes": 24 * MiB, "head_bytes": 25 * MiB},
                      {"system": "dask", "figure": "memory", "worker_bytes": None, "head_bytes": None, "error": "cannot read"},
                      {"system": "ray", "figure": "memory", "worker_bytes": 0, "head_bytes": 0})
        memory = row(lines, "idle worker resident memory")
        self.assertEqual(memory[3:5], ["FAILED", "FAILED"])
        self.assertEqual(memory[-1], "not compared: no peer measured it")

    def test_a_skipped_figure_is_not_a_failed_one(self):
        lines = table({"system": "spokes", "figure": "recovery", "seconds": 0.004},
                      {"system": "ray", "figure": "recovery", "seconds": None, "note": "skipped in --quick"})
        recovery = row(lines, "recovery after a killed worker")
        self.assertEqual(recovery[2:4], ["0.004", "-"])
        self.assertEqual(recovery[-1], "< 2 s: met")

    def test_the_sealed_cluster_has_its_column_and_its_ratio_to_the_open_one(self):
        lines = table({"system": "spokes", "figure": "noop_throughput", "tasks_per_second": 30000},
                      {"system": "spokes-sealed", "figure": "noop_throughput", "tasks_per_second": 27000},
                      {"system": "dask", "figure": "noop_throughput", "tasks_per_second": 600})
        header = [cell.strip() for cell in lines[0].strip("|").split("|")]
        self.assertEqual(header[2:7], ["spokes", "spokes-sealed", "dask", "sealed/open", "spokes/dask"])
        throughput = row(lines, "no-op throughput, 2 workers")
        self.assertEqual(throughput[5:7], ["0.90", "50.00"])

    def test_dask_with_tls_has_its_column_and_its_ratio_to_plain_dask_but_is_no_peer(self):
        lines = table({"system": "spokes", "figure": "noop_throughput", "tasks_per_second": 30000},
                      {"system": "spokes-sealed", "figure": "noop_throughput", "tasks_per_second": 27000},
                      {"system": "dask", "figure": "noop_throughput", "tasks_per_second": 600},
                      {"system": "dask-tls", "figure": "noop_throughput", "tasks_per_second": 450},
                      {"system": "spokes", "figure": "round_trip", "p50": 0.0003},
                      {"system": "dask", "figure": "round_trip", "p50": 0.002},
                      {"system": "dask-tls", "figure": "round_trip", "error": "tls handshake failed"})
        header = [cell.strip() for cell in lines[0].strip("|").split("|")]
        self.assertEqual(header[2:10], ["spokes", "spokes-sealed", "dask", "dask-tls", "sealed/open", "tls/plain",
                                        "spokes/dask", "target"])
        throughput = row(lines, "no-op throughput, 2 workers")
        self.assertEqual(throughput[2:9], ["30,000", "27,000", "600", "450", "0.90", "0.75", "50.00"])
        self.assertEqual(throughput[-1], ">= 2x best peer: 50.00x met", "compared with plain Dask only")
        p50 = row(lines, "round trip p50")
        self.assertEqual(p50[5], "FAILED")
        self.assertEqual(p50[6:9], ["-", "-", "0.15"], "no ratio from a failed or missing figure")
        self.assertIn("dask-tls round_trip: tls handshake failed", lines)
        self.assertFalse(any(line.startswith("| idle worker resident memory ") for line in lines),
                         "a figure no system measured has no row")


if __name__ == "__main__":
    unittest.main()
