#!/usr/bin/env python3
"""Tests of check_history.py on made-up histories: each violation it names is caught,
and a clean history passes. Standard library only; run by .ci/run."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_history  # noqa: E402

REPORT = {"job": "job-1", "users": 3, "completedUsers": 3, "stored": True}


def bike_run(job="job-1", printed=REPORT, exit="0"):
    return {"type": "run", "name": "brain", "kind": "bike", "job": job, "exit": exit,
            "printed": json.dumps(printed), "stderr": f"job {job} accepted by n1\n"}


def stored(node, out, job="job-1"):
    return {"type": "stored", "job": job, "node": node, "exit": 0, "out": out, "err": ""}


def listed(node, state="completed", job="job-1", done=3):
    return {"type": "listed", "node": node, "jobs": [{"job": job, "state": state, "completedUsers": done}]}


class CheckHistoryTests(unittest.TestCase):
    def test_a_clean_history_passes(self):
        kept = json.dumps(dict(REPORT, stored=True))
        records = [listed("n1"), listed("n2"), bike_run(), stored("n1", kept), stored("n2", kept)]
        self.assertEqual(check_history.check(records), [])

    def test_a_vanished_job_is_named(self):
        records = [listed("n1", job="other"), bike_run()]
        self.assertIn("vanished", check_history.check(records)[0])

    def test_a_job_listed_as_running_has_not_vanished(self):
        records = [listed("n1", state="running"), bike_run(exit="1")]
        self.assertEqual(check_history.check(records), [])

    def test_two_reports_of_one_job_are_named(self):
        records = [listed("n1"), bike_run(), stored("n1", json.dumps(REPORT)),
                   stored("n2", json.dumps(dict(REPORT, completedUsers=2)))]
        self.assertTrue(any("different reports" in line for line in check_history.check(records)))

    def test_states_that_disagree_are_named(self):
        records = [listed("n1", "completed"), listed("n2", "cancelled"), bike_run(), stored("n1", json.dumps(REPORT))]
        self.assertTrue(any("different states" in line for line in check_history.check(records)))

    def test_a_printed_report_that_is_not_the_stored_one_is_named(self):
        records = [listed("n1"), bike_run(printed=dict(REPORT, completedUsers=2)), stored("n1", json.dumps(REPORT))]
        self.assertTrue(any("differs from the stored one in completedUsers" in line for line in check_history.check(records)))

    def test_printed_map_lines_must_be_the_stored_ones(self):
        run = {"type": "run", "name": "split", "kind": "map", "job": "map-1", "exit": "0",
               "printed": "1.0\n2.0\n", "stderr": "job map-1 accepted by n1\n"}
        records = [listed("n1", job="map-1"), run, stored("n1", "1.0\n3.0\n", job="map-1")]
        self.assertTrue(any("not its stored report" in line for line in check_history.check(records)))
        run["printed"] = "1.0\n3.0\n"
        self.assertEqual(check_history.check(records), [])

    def test_a_refused_job_that_ran_is_named(self):
        run = {"type": "run", "name": "late", "kind": "bike", "job": None, "exit": "1", "printed": "",
               "stderr": "n1 refused job job-9: its start was not committed\n"}
        records = [listed("n2", job="job-9", done=4), run]
        self.assertTrue(any("was refused, yet n2 lists it" in line for line in check_history.check(records)))


if __name__ == "__main__":
    unittest.main()
