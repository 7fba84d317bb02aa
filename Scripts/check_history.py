#!/usr/bin/env python3
"""A checker over histories (issue 29 §3): what clients did and saw, against what the
nodes keep at the end. Scripts/test-partitions records its clients' runs; this gathers
every node's view of their jobs and checks:

  - no acknowledged job vanished: a job whose client heard it accepted has a stored
    report somewhere, or is listed (running or stalled) by some node;
  - one report per job: every node that answers `spokes result JOB` answers the same;
  - every node that lists the job lists it in the same state;
  - what the client printed is the report: a map's printed lines are the lines
    `spokes result JOB` prints, a bike job's `--json` report is the stored one;
  - a job its client was told was refused never ran: no node lists it as having run
    a task or a user.

Standard library only.

    check_history.py gather LOGS --nodes A,B,... --cluster NAME -- CLIENT COMMAND...
        reads LOGS/runs ("PID KIND NAME" lines) and LOGS/exits ("PID RC" lines), asks
        every node with CLIENT COMMAND (the `spokes` binary, in the client's namespace),
        writes LOGS/history.jsonl
    check_history.py check HISTORY
        prints each violation; exit 1 when there is one
"""
import json
import os
import re
import subprocess
import sys

ACCEPTED = re.compile(r"^job (\S+) accepted by ", re.M)
# Fields of a bike job's report that may differ between the printed and the stored copy.
VOLATILE = {"stored", "storeError"}


def run_command(command, timeout=20):
    """(exit status, stdout, stderr) of `command`, bounded in time."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""
    except OSError as error:
        return "error", "", str(error)


def read(path):
    try:
        with open(path, errors="replace") as file:
            return file.read()
    except OSError:
        return ""


def gather(logs, nodes, cluster, client):
    exits = {}
    for line in read(os.path.join(logs, "exits")).splitlines():
        parts = line.split()
        if len(parts) == 2:
            exits[parts[0]] = parts[1]
    records = []
    def ask(*arguments):
        return run_command(client + list(arguments) + ["--cluster", cluster])

    for node in nodes:
        status, out, _ = ask("jobs", "--to", node, "--json")
        try:
            jobs = json.loads(out)["jobs"] if status == 0 else None
        except (ValueError, KeyError, TypeError):
            jobs = None
        records.append({"type": "listed", "node": node, "jobs": jobs})
    for line in read(os.path.join(logs, "runs")).splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        pid, kind, name = parts
        stderr = read(os.path.join(logs, name + ".err"))
        found = ACCEPTED.search(stderr)
        job = found.group(1) if found else None
        printed = read(os.path.join(logs, name + (".out" if kind == "map" else ".json")))
        records.append({"type": "run", "name": name, "kind": kind, "job": job, "exit": exits.get(pid),
                        "printed": printed, "stderr": stderr[-2000:]})
        if job is None:
            continue
        for node in nodes:
            status, out, err = ask("result", job, "--to", node, *(["--json"] if kind != "map" else []))
            records.append({"type": "stored", "job": job, "node": node, "exit": status, "out": out, "err": err[-500:]})
    with open(os.path.join(logs, "history.jsonl"), "w") as file:
        for record in records:
            file.write(json.dumps(record, sort_keys=True) + "\n")


def comparable(text):
    """A bike report's JSON without its volatile fields, or None."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    return {key: value for key, value in data.items() if key not in VOLATILE}


def check(records):
    """The violations in a history, as lines."""
    violations = []
    listed = [record for record in records if record["type"] == "listed" and record.get("jobs") is not None]
    runs = [record for record in records if record["type"] == "run"]
    stored = {}
    for record in records:
        if record["type"] == "stored":
            stored.setdefault(record["job"], []).append(record)
    for run in runs:
        job, name = run["job"], run["name"]
        refused = "refused" in run["stderr"] and job is None
        if refused:
            continue
        if job is None:
            continue
        answers = [record for record in stored.get(job, []) if record["exit"] == 0 and record["out"].strip()]
        states = {}
        for view in listed:
            for summary in view["jobs"]:
                if summary.get("job") == job:
                    states[view["node"]] = summary.get("state")
        if not answers and not any(state in ("running", "stalled") for state in states.values()):
            violations.append(f"{name}: acknowledged job {job} vanished: no node stores or lists it")
            continue
        texts = {record["out"] for record in answers}
        if len(texts) > 1:
            nodes = ", ".join(record["node"] for record in answers)
            violations.append(f"{name}: job {job} has {len(texts)} different reports (asked {nodes})")
        if len(set(states.values())) > 1:
            violations.append(f"{name}: job {job} is listed in different states: {states}")
        if run["exit"] != "0" or not answers:
            continue
        report = answers[0]["out"]
        if run["kind"] == "map":
            if run["printed"].splitlines() != report.splitlines():
                violations.append(f"{name}: what the client printed for {job} is not its stored report")
        else:
            printed, kept = comparable(run["printed"]), comparable(report)
            if printed is None or kept is None:
                violations.append(f"{name}: the printed or the stored report of {job} is not JSON")
            elif printed != kept:
                keys = sorted(key for key in set(printed) | set(kept) if printed.get(key) != kept.get(key))
                violations.append(f"{name}: the printed report of {job} differs from the stored one in {', '.join(keys)}")
    # A refused job never ran: a job id named in a refusal is listed by nobody as run.
    for run in runs:
        for job in re.findall(r"refused (?:the )?job ([A-Za-z0-9_-]+)", run["stderr"]):
            for view in listed:
                for summary in view["jobs"]:
                    if summary.get("job") == job and (summary.get("completedUsers") or 0) > 0:
                        violations.append(f"{run['name']}: job {job} was refused, yet {view['node']} lists it as having run")
    return violations


def main(arguments):
    if not arguments:
        sys.exit(__doc__)
    if arguments[0] == "gather":
        logs = arguments[1]
        rest = arguments[2:]
        split = rest.index("--")
        options, client = rest[:split], rest[split + 1:]
        nodes = options[options.index("--nodes") + 1].split(",")
        cluster = options[options.index("--cluster") + 1]
        gather(logs, nodes, cluster, client)
    elif arguments[0] == "check":
        with open(arguments[1]) as file:
            records = [json.loads(line) for line in file if line.strip()]
        violations = check(records)
        runs = sum(1 for record in records if record["type"] == "run")
        for line in violations:
            print("violation: " + line)
        print(f"history: {runs} client runs, {len(violations)} violations")
        sys.exit(1 if violations else 0)
    else:
        sys.exit(f"unknown command {arguments[0]}")


if __name__ == "__main__":
    main(sys.argv[1:])
