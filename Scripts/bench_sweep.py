#!/usr/bin/env python3
"""The sweep benchmark's peers (Scripts/bench-sweep): the same sweep as `spokes sweep`,
whole simulations of the Python bike port (Scripts/bench_peers.py), one run per task, on
Dask or Ray with one single-threaded worker per core of the cores this process is pinned
to (`taskset -c 0` or `taskset -c 0,1`: the scheduler, the workers and this driver all
inherit it, as Spokes' nodes and client do).

    bench_sweep.py dask|ray WORKERS USERS PATHS SEEDS     prints one JSON line:
    {"system", "workers", "runs", "seconds", "runs_per_second", "paths", "version"}
    bench_sweep.py python USERS PATHS SEED                one run in this process, its total paths

A failed measurement prints {"error": ...} and exits 1.
"""
import asyncio
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
SYSTEM = sys.argv[1] if len(sys.argv) > 1 else ""
# bench_peers reads its mode from argv[1]; it is imported for the port only.
import bench_peers as port  # noqa: E402


def one_run(arguments):
    """One whole simulation at time scale 0, users one at a time (as `simulate --workers 1`);
    returns its total paths (a check that the runs did the work)."""
    users, paths, seed = arguments
    results, _, _, _ = asyncio.run(port.ride_in_process(users, seed, paths, 0.1, 0, one_at_a_time=True))
    return sum(result[2] for result in results)


def dask_sweep(workers, runs):
    import dask
    import distributed
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      host="127.0.0.1", memory_limit=0) as cluster, Client(cluster) as client:
        client.wait_for_workers(workers, timeout=60)
        # Warm-up: every worker imports the port once before the clock starts.
        client.gather(client.map(one_run, [(5, 1, seed) for seed in range(workers * 2)], pure=False))
        start = time.monotonic()
        paths = client.gather(client.map(one_run, runs, pure=False))
        seconds = time.monotonic() - start
    return seconds, paths, f"dask {dask.__version__}, distributed {distributed.__version__}"


def ray_sweep(workers, runs):
    import ray
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    try:
        remote = ray.remote(num_cpus=1)(one_run)
        ray.get([remote.remote((5, 1, seed)) for seed in range(workers * 2)])
        start = time.monotonic()
        paths = ray.get([remote.remote(run) for run in runs])
        seconds = time.monotonic() - start
        return seconds, paths, f"ray {ray.__version__}"
    finally:
        ray.shutdown()


def main():
    if SYSTEM == "python":
        print(one_run((int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))))
        return
    workers, users, paths = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    first, last = (int(part) for part in sys.argv[5].split("-"))
    runs = [(users, paths, seed) for seed in range(first, last + 1)]
    try:
        sweep = {"dask": dask_sweep, "ray": ray_sweep}[SYSTEM]
        seconds, totals, version = sweep(workers, runs)
        if len(totals) != len(runs) or any(total <= 0 for total in totals):
            raise RuntimeError(f"{len(totals)} of {len(runs)} runs came back with paths")
        print(json.dumps({"system": SYSTEM, "workers": workers, "runs": len(runs), "seconds": seconds,
                          "runs_per_second": len(runs) / seconds, "paths": sum(totals), "version": version}))
    except Exception as error:  # a failed measurement fails its figure
        print(json.dumps({"system": SYSTEM, "workers": workers, "error": f"{type(error).__name__}: {error}"}))
        sys.exit(1)


if __name__ == "__main__":
    main()
