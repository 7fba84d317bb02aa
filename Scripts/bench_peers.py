#!/usr/bin/env python3
"""The peer side of Scripts/bench: the same figures as `spokes bench --json`, measured on
Dask.distributed and Ray, each in the setup its users run on a LAN (a scheduler or head
process plus worker processes on 127.0.0.1; this script is the client, in a process of
its own). Prints one JSON object per figure on stdout.

Every process it starts is in a session of its own and is stopped by its PID (the
whole process group) at the end, also on Ctrl-C or an error.

    bench_peers.py dask|ray [--quick]
    bench_peers.py dask|ray --stage NAME [--quick]   (run by the first: each stage in a process of its own)

Each stage (one cluster) runs in a fresh Python process: Ray's client does not survive
many connect/shutdown cycles in one process (after a few, it aborts with "Failed to
connect to GCS within 60 seconds"), and a stage that dies must not take the others with it.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time

QUICK = "--quick" in sys.argv
STAGE = sys.argv[sys.argv.index("--stage") + 1] if "--stage" in sys.argv else None
SYSTEM = sys.argv[1]
STARTED = []  # Popen objects, each the leader of its own process group


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(args, env=None):
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True, env={**os.environ, **(env or {})})
    STARTED.append(process)
    return process


def stop_all():
    for process in STARTED:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 3
    for process in STARTED:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    STARTED.clear()


def tree_rss(pid):
    """Resident bytes of `pid` and every process in its process group."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getpgid(int(entry)) != os.getpgid(pid):
                continue
            with open(f"/proc/{entry}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except (ProcessLookupError, FileNotFoundError, PermissionError):
            pass
    return total


def percentile(samples, fraction):
    samples = sorted(samples)
    return samples[min(len(samples) - 1, int(len(samples) * fraction))]


def emit(figure, **values):
    print(json.dumps({"system": SYSTEM, "figure": figure, **values}), flush=True)


def noop(x):
    return x


def nap(seconds):
    time.sleep(seconds)
    return seconds


def stamped_nap(seconds):
    """Sleeps and says when it started (CLOCK_MONOTONIC is shared by every process)."""
    start = time.monotonic()
    time.sleep(seconds)
    return (start, os.getpid())


# MARK: - Dask


class Dask:
    name = "dask"

    def __init__(self, workers, threads):
        import dask
        import distributed
        self.version = f"dask {dask.__version__}, distributed {distributed.__version__}"
        port = free_port()
        self.address = f"tcp://127.0.0.1:{port}"
        self.launched = time.monotonic()
        self.scheduler = spawn(["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"])
        self.workers = [spawn(["dask", "worker", self.address, "--host", "127.0.0.1", "--nthreads", str(threads),
                               "--no-dashboard", "--memory-limit", "0", "--name", f"w{index}"])
                        for index in range(workers)]
        from distributed import Client
        deadline = time.monotonic() + 60
        while True:
            try:
                self.client = Client(self.address, timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.client.wait_for_workers(workers, timeout=60)

    def map(self, function, items):
        return self.client.gather(self.client.map(function, items, pure=False))

    def call(self, function, item):
        return self.client.submit(function, item, pure=False).result()

    def worker_pids(self):
        return [worker.pid for worker in self.workers]

    def head_pid(self):
        return self.scheduler.pid

    def close(self):
        self.client.close()
        stop_all()


# MARK: - Ray


class Ray:
    name = "ray"

    def __init__(self, workers, threads):
        import ray
        self.ray = ray
        self.version = f"ray {ray.__version__}"
        port = free_port()
        env = {"RAY_USAGE_STATS_ENABLED": "0"}
        common = ["--node-ip-address", "127.0.0.1", "--num-cpus", str(threads), "--block", "--disable-usage-stats"]
        self.launched = time.monotonic()
        self.head = spawn(["ray", "start", "--head", "--port", str(port), "--include-dashboard", "false"] + common, env)
        self.workers = []
        deadline = time.monotonic() + 90
        while True:
            try:
                ray.init(address=f"127.0.0.1:{port}", logging_level="ERROR", log_to_driver=False)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        # The head is a node too: workers - 1 more nodes make `workers` nodes.
        for _ in range(workers - 1):
            self.workers.append(spawn(["ray", "start", "--address", f"127.0.0.1:{port}"] + common, env))
        while len([node for node in ray.nodes() if node["Alive"]]) < workers:
            if time.monotonic() > deadline:
                raise RuntimeError("ray nodes did not join")
            time.sleep(0.05)
        self.remote_noop = ray.remote(num_cpus=1)(noop)
        self.remote_nap = ray.remote(num_cpus=1, max_retries=3)(nap)
        self.remote_stamped = ray.remote(num_cpus=1, max_retries=3)(stamped_nap)
        self.functions = {noop: self.remote_noop, nap: self.remote_nap, stamped_nap: self.remote_stamped}

    def map(self, function, items):
        remote = self.functions[function]
        return self.ray.get([remote.remote(item) for item in items])

    def call(self, function, item):
        return self.ray.get(self.functions[function].remote(item))

    def worker_pids(self):
        return [worker.pid for worker in self.workers]

    def head_pid(self):
        return self.head.pid

    def close(self):
        self.ray.shutdown()
        stop_all()


SYSTEMS = {"dask": Dask, "ray": Ray}


def main():
    if STAGE is None:
        stages = ["start", "noop", "scaling-1", "scaling-2"] + ([] if QUICK else ["scaling-4"]) + ["recovery"]
        for name in stages:
            try:
                child = subprocess.run([sys.executable, __file__, SYSTEM, "--stage", name] + (["--quick"] if QUICK else []),
                                       stdout=subprocess.PIPE, text=True, timeout=900)
                status = child.returncode
                output = child.stdout
            except subprocess.TimeoutExpired as timeout:
                status, output = "timeout", timeout.stdout or ""
            lines = [line for line in (output or "").splitlines() if line.startswith("{")]
            for line in lines:
                print(line, flush=True)
            if status != 0:
                print(f"stage {name} of {SYSTEM} ended with {status}", file=sys.stderr)
        return
    stage(SYSTEMS[SYSTEM], 1 if QUICK else 3)


def stage(system, runs):
    noops = 2_000 if QUICK else 20_000
    round_trips = 200 if QUICK else 1_000
    if STAGE == "recovery":
        recovery(system, runs)
        return
    if STAGE.startswith("scaling-"):
        scaling(system, runs, int(STAGE.split("-")[1]))
        return
    if STAGE == "noop":
        noop_and_round_trip(system, runs, noops, round_trips)
        return

    # "start": 4. cold start (and 5. memory, on the idle cluster it leaves), best of `runs`.
    colds = []
    for run in range(runs):
        cluster = system(workers=2, threads=1)
        cluster.call(noop, 1)
        colds.append(time.monotonic() - cluster.launched)
        if run == runs - 1:
            time.sleep(2)  # idle
            version = cluster.version
            worker_rss = min(tree_rss(pid) for pid in cluster.worker_pids()) if cluster.worker_pids() else None
            head_rss = tree_rss(cluster.head_pid())
        cluster.close()
    emit("cold_start", seconds=min(colds), version=version)
    emit("memory", worker_bytes=worker_rss, head_bytes=head_rss)


def noop_and_round_trip(system, runs, noops, round_trips):
    """1. No-op throughput and 2. round trip, on a 2-worker cluster."""
    cluster = system(workers=2, threads=1)
    try:
        cluster.map(noop, range(100))
        rates = []
        for _ in range(runs):
            start = time.monotonic()
            results = cluster.map(noop, range(noops))
            assert len(results) == noops
            rates.append(noops / (time.monotonic() - start))
        emit("noop_throughput", tasks=noops, tasks_per_second=max(rates))
        for _ in range(20):
            cluster.call(noop, 1)
        best = None
        for _ in range(runs):
            samples = []
            for index in range(round_trips):
                start = time.monotonic()
                cluster.call(noop, index)
                samples.append(time.monotonic() - start)
            figures = (percentile(samples, 0.5), percentile(samples, 0.99))
            best = figures if best is None or figures[0] < best[0] else best
        emit("round_trip", calls=round_trips, p50=best[0], p99=best[1])
    finally:
        cluster.close()



def scaling(system, runs, nodes):
    """3. Slot-bound scaling: 200 x nap 0.1 s, 4 slots per node."""
    cluster = system(workers=nodes, threads=4)
    try:
        cluster.map(noop, range(10))
        walls = []
        for _ in range(runs):
            start = time.monotonic()
            cluster.map(nap, [0.1] * 200)
            walls.append(time.monotonic() - start)
        ideal = 200 * 0.1 / (4 * nodes)
        emit("scaling", nodes=nodes, seconds=min(walls), efficiency=ideal / min(walls))
    finally:
        cluster.close()


def recovery(system, runs):
    """3 workers x 4 slots run 8 tasks of 3 s; after 1 s the last worker is SIGKILLed;
    recovery is the time until the last task that was lost has started again elsewhere."""
    import threading
    recoveries = []
    for _ in range(runs):
        cluster = system(workers=3, threads=4)
        try:
            outcome = {}
            job = threading.Thread(target=lambda: outcome.update(results=cluster.map(stamped_nap, [3.0] * 8)), daemon=True)
            job.start()
            time.sleep(1.0)
            victim = cluster.worker_pids()[-1]
            killed = time.monotonic()
            os.killpg(victim, signal.SIGKILL)
            job.join(timeout=120)
            restarted = [start - killed for start, _ in outcome.get("results", []) if start > killed]
            if restarted:
                recoveries.append(max(restarted))
        finally:
            cluster.close()
    emit("recovery", seconds=min(recoveries) if recoveries else None,
         note=None if recoveries else "no task was running on the killed worker, or none finished")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
    finally:
        stop_all()
