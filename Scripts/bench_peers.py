#!/usr/bin/env python3
"""The peer side of Scripts/bench: the same figures as `spokes bench --json`, measured on
Dask.distributed and Ray, each in the setup its users run on a LAN (a scheduler or head
process plus worker processes on 127.0.0.1; this script is the client, in a process of
its own). Prints one JSON object per figure on stdout, and how long each stage took on
stderr.

    bench_peers.py dask|dask-tls|ray [--quick] [--stages NAME,...]
    bench_peers.py python [--quick]      the bike workload's Python port in one process
    bench_peers.py dask|dask-tls|ray --stage NAME [--quick]   (run by the first: each stage in a process of its own)
    bench_peers.py python --check-spokes SPOKES      the port against `spokes simulate --workers 1`

"dask-tls" is Dask with mutual TLS on every connection (scheduler, workers, client), the
counterpart of a Spokes cluster with a secret: a throwaway certificate authority and node
certificate made with openssl into a temporary directory, removed at the end. --stages
runs only the stages named (Scripts/bench runs dask-tls with --stages noop,bikes).

Every process it starts is the leader of a session of its own, and is stopped with every
process of that session, by PID, at the end, also on Ctrl-C or an error. (A session, not
a process group: Ray's raylet puts each of its worker processes in a process group of
its own, but they stay in the session.)

Each stage runs in a fresh Python process, so a stage that dies cannot take the others
with it. The full run starts a fresh cluster for each figure, as Spokes does. The quick
run (--quick) reuses clusters: one of 2 workers x 1 slot for cold start, memory, no-op
throughput and round trip, and one of 4 slots per worker that grows from 1 to 2 to 3
workers for scaling, the bike workload and recovery (Ray's start and stop are most of
its time).
"""
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

QUICK = "--quick" in sys.argv
STAGE = sys.argv[sys.argv.index("--stage") + 1] if "--stage" in sys.argv else None
STAGES = sys.argv[sys.argv.index("--stages") + 1].split(",") if "--stages" in sys.argv else None
SYSTEM = sys.argv[1]
# The certificates of dask-tls (see make_certificates), made by the parent for its stages.
TLS_DIRECTORY = "BENCH_TLS_DIRECTORY"
STARTED = []  # Popen objects, each the leader of its own session
MILANO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Data", "citybikes", "Milano.json")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(args, env=None):
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True, env={**os.environ, **(env or {})})
    STARTED.append(process)
    # Tell the parent (see sweep): a stage can die before its own cleanup runs.
    if os.environ.get("BENCH_SPAWNED"):
        stat = _stat(process.pid)
        with open(os.environ["BENCH_SPAWNED"], "a") as record:
            record.write(f"{process.pid} {stat[3] if stat else 0}\n")
    return process


def sweep(record):
    """Stops every session a stage started that is still running (by the PIDs and start
    times the stage wrote to `record`). A stage normally stops its own, but Ray's driver
    installs a C++ SIGTERM handler that ends the process before Python's cleanup runs."""
    try:
        with open(record) as lines:
            leaders = [tuple(int(field) for field in line.split()) for line in lines if line.strip()]
    except FileNotFoundError:
        return
    alive = [(pid, started) for pid, started in leaders if _stat(pid) and _stat(pid)[3] == started]
    members = [member for pid, _ in alive for member in session_members(pid)]
    if members:
        note(f"stopping {len(members)} processes a stage left running")
        signal_members(members, signal.SIGKILL)


def _stat(pid):
    """(ppid, process group, session, start time) of `pid`, from /proc; None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19])
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return None


def _processes():
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]


def session_members(leader):
    """Every live process in the session that `leader` (a process we started) leads, as
    (pid, start time) so a recycled PID is never signalled."""
    members = []
    for pid in _processes():
        stat = _stat(pid)
        if stat is not None and stat[2] == leader:
            members.append((pid, stat[3]))
    return members


def signal_members(members, number):
    for pid, started in members:
        stat = _stat(pid)
        if stat is not None and stat[3] == started:
            try:
                os.kill(pid, number)
            except ProcessLookupError:
                pass


def stop(processes, grace=2.0):
    """SIGTERM to every process of each one's session, up to `grace` seconds to exit,
    then SIGKILL to whatever of those sessions is left."""
    members = [member for process in processes for member in session_members(process.pid)]
    signal_members(members, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_stat(pid) and _stat(pid)[3] == started for pid, started in members):
        for process in processes:
            process.poll()
        time.sleep(0.05)
    signal_members([member for process in processes for member in session_members(process.pid)] + members, signal.SIGKILL)
    for process in processes:
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def stop_all():
    # What follows a stop is not measured until the next cluster is up, so the quick
    # run gives each session only half a second after SIGTERM before SIGKILL.
    stop(list(STARTED), 0.5 if QUICK else 2.0)
    STARTED.clear()


def tree_rss(pid):
    """Resident bytes of `pid` and every process in its process group; None when `pid`'s
    own size cannot be read (a failed measurement, never 0 bytes)."""
    try:
        group = os.getpgid(pid)
    except ProcessLookupError:
        return None
    total, read_leader = 0, False
    for entry in _processes():
        try:
            if os.getpgid(entry) != group:
                continue
            with open(f"/proc/{entry}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
                        read_leader = read_leader or entry == pid
        except (ProcessLookupError, FileNotFoundError, PermissionError):
            pass
    return total if read_leader and total > 0 else None


def percentile(samples, fraction):
    samples = sorted(samples)
    return samples[min(len(samples) - 1, int(len(samples) * fraction))]


def emit(figure, **values):
    print(json.dumps({"system": SYSTEM, "figure": figure, **values}), flush=True)


def note(text):
    print(f"{SYSTEM}: {text}", file=sys.stderr, flush=True)


class timed:
    """Notes on stderr how long a step of a stage took (where the run's time goes)."""

    def __init__(self, label):
        self.label = label

    def __enter__(self):
        self.began = time.monotonic()

    def __exit__(self, *_):
        note(f"  {self.label}: {time.monotonic() - self.began:.1f} s")


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


# MARK: - The bike workload, ported from SpokesBikes

MASK = (1 << 64) - 1


class SeededGenerator:
    """xoshiro256** seeded through SplitMix64, with Lemire's unbiased bounded draw: the
    same numbers, draw for draw, as SpokesBikes' SeededGenerator (checked against
    `spokes simulate --workers 1` by --check-spokes)."""
    __slots__ = ("s0", "s1", "s2", "s3")

    def __init__(self, seed, stream=0):
        state = (seed ^ ((stream * 0xD1B54A32D192ED03) & MASK)) & MASK
        words = []
        for _ in range(4):
            state = (state + 0x9E3779B97F4A7C15) & MASK
            z = state
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
            words.append(z ^ (z >> 31))
        if words == [0, 0, 0, 0]:
            words[0] = 1
        self.s0, self.s1, self.s2, self.s3 = words

    def next(self):
        s0, s1, s2, s3 = self.s0, self.s1, self.s2, self.s3
        x = (s1 * 5) & MASK
        result = ((((x << 7) | (x >> 57)) & MASK) * 9) & MASK
        shifted = (s1 << 17) & MASK
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= shifted
        s3 = ((s3 << 45) | (s3 >> 19)) & MASK
        self.s0, self.s1, self.s2, self.s3 = s0, s1, s2, s3
        return result

    def index(self, bound):
        product = self.next() * bound
        if product & MASK < bound:
            threshold = ((1 << 64) - bound) % bound
            while product & MASK < threshold:
                product = self.next() * bound
        return product >> 64


def milano():
    """The Milano network's stations as (free bikes, empty slots); null counts are 0, as
    in SpokesBikes."""
    with open(MILANO) as file:
        stations = json.load(file)["network"]["stations"]
    return [(max(0, station.get("free_bikes") or 0), max(0, station.get("empty_slots") or 0)) for station in stations]


def ride_steps(user, seed, paths, station_count, progress=(0, False, 0, 0, 0), max_moves=1_000_000):
    """One user's ride by the rules of the ride (SpokesBikes' BikeUser), as a generator:
    it yields (leave, station index, step) for each station the user arrives at, is sent
    whether the take (on foot) or leave (riding) succeeded, and returns its tally
    (moves, holds a bike, paths, failed takes, failed leaves). The user starts on foot;
    the next station is drawn from its own seeded stream and may be the same; a failed
    take or leave is a move on (waiting time); it stops after `paths` bikes left.
    `progress` resumes it after its last acknowledged step."""
    moves, has_bike, done, failed_takes, failed_leaves = progress
    random = SeededGenerator(seed, user)
    for _ in range(moves):
        random.index(station_count)
    while done < paths and moves < max_moves:
        index = random.index(station_count)
        succeeded = yield (has_bike, index, moves + 1)
        moves += 1
        if has_bike:
            if succeeded:
                has_bike, done = False, done + 1
            else:
                failed_leaves += 1
        elif succeeded:
            has_bike = True
        else:
            failed_takes += 1
    return (moves, has_bike, done, failed_takes, failed_leaves)


class Stations:
    """Stations in one process (SpokesBikes' BikeStation): take and leave each check and
    change the counts together. Users in one asyncio loop never run between the check
    and the change."""

    def __init__(self, counts):
        self.bikes = [bikes for bikes, _ in counts]
        self.slots = [slots for _, slots in counts]

    def move(self, leave, index):
        if leave:
            if self.slots[index] > 0:
                self.slots[index] -= 1
                self.bikes[index] += 1
                return True
            return False
        if self.bikes[index] > 0:
            self.bikes[index] -= 1
            self.slots[index] += 1
            return True
        return False


class StationLedger(Stations):
    """The stations of a cluster run, held by one Dask actor or Ray actor, with
    SpokesBikes' JobLedger rules: every take or leave names its (user, attempt, step); a
    repeat of the user's last step returns the recorded outcome, a step out of order or
    from an attempt that a newer one fenced off is refused, and the check and the change
    happen under one lock. `begin` starts a user's next attempt and says where it
    resumes."""

    def __init__(self, counts, users):
        super().__init__(counts)
        self.lock = threading.Lock()
        self.attempt = [0] * users
        self.progress = [(0, False, 0, 0, 0)] * users
        self.last = [None] * users
        self.closed = False

    def begin(self, user):
        with self.lock:
            self.attempt[user] += 1
            return self.attempt[user], self.progress[user]

    def step(self, leave, index, user, attempt, step):
        with self.lock:
            if self.closed:
                raise RuntimeError(f"user {user}: the job has ended")
            if attempt < self.attempt[user]:
                raise RuntimeError(f"user {user}: attempt {attempt} was fenced off by attempt {self.attempt[user]}")
            moves, has_bike, done, failed_takes, failed_leaves = self.progress[user]
            if step == moves and self.last[user] is not None:
                return self.last[user]
            if step != moves + 1 or leave != has_bike:
                raise RuntimeError(f"user {user}: step {step} is out of order (next is {moves + 1})")
            succeeded = self.move(leave, index)
            if has_bike:
                self.progress[user] = (step, not succeeded, done + succeeded, failed_takes, failed_leaves + (not succeeded))
            else:
                self.progress[user] = (step, succeeded, done, failed_takes + (not succeeded), failed_leaves)
            self.last[user] = succeeded
            return succeeded

    def snapshot(self):
        """Closes the job (no move after it) and returns the stations and every user's progress."""
        with self.lock:
            self.closed = True
            return self.bikes, self.slots, self.progress


def ride_on_cluster(user, begin, dock, seed, paths, station_count, seconds_per_move):
    """One user as one task on a cluster worker: every take and leave is a call to the
    stations actor (`dock`), and the user sleeps `seconds_per_move` between moves."""
    attempt, progress = begin(user)
    steps = ride_steps(user, seed, paths, station_count, progress)
    try:
        leave, index, step = next(steps)
        while True:
            succeeded = dock(leave, index, user, attempt, step)
            leave, index, step = steps.send(succeeded)
            if seconds_per_move > 0:
                time.sleep(seconds_per_move)
    except StopIteration as end:
        return end.value


def dask_rider(user, stations, seed, paths, station_count, seconds_per_move):
    return ride_on_cluster(user, lambda u: stations.begin(u).result(),
                           lambda *move: stations.step(*move).result(),
                           seed, paths, station_count, seconds_per_move)


def ray_rider(user, stations, seed, paths, station_count, seconds_per_move):
    import ray
    return ride_on_cluster(user, lambda u: ray.get(stations.begin.remote(u)),
                           lambda *move: ray.get(stations.step.remote(*move)),
                           seed, paths, station_count, seconds_per_move)


def conservation(counts, bikes, slots, holding):
    """SpokesBikes' ConservationCheck: bikes docked before == docked after + ridden, no
    count below zero, every station's capacity unchanged. Returns (holds, text)."""
    before, after = sum(b for b, _ in counts), sum(bikes)
    broken = [i for i, (b, s) in enumerate(counts) if bikes[i] < 0 or slots[i] < 0 or bikes[i] + slots[i] != b + s]
    holds = before == after + holding and not broken and len(bikes) == len(counts)
    return holds, f"bikes before {before}, after {after}, in use {holding}, stations broken {len(broken)}"


async def ride_in_process(users, seed, paths, move_time, time_scale, one_at_a_time=False):
    """Every user as an asyncio task in this process, on `Stations`: the same ride as on
    a cluster, each move followed by `await asyncio.sleep(move time x scale)` (at scale
    0 that only lets the other users move, as the awaited actor call does in Spokes).
    Returns (results, stations, counts, wall seconds)."""
    counts = milano()
    stations = Stations(counts)
    sleep = move_time * time_scale

    async def user_task(user):
        steps = ride_steps(user, seed, paths, len(counts))
        try:
            leave, index, _ = next(steps)
            while True:
                succeeded = stations.move(leave, index)
                leave, index, _ = steps.send(succeeded)
                await asyncio.sleep(sleep)
        except StopIteration as end:
            return end.value

    start = time.monotonic()
    if one_at_a_time:
        results = [await user_task(user) for user in range(users)]
    else:
        results = await asyncio.gather(*(user_task(user) for user in range(users)))
    return results, stations, counts, time.monotonic() - start


def python_bikes(runs):
    """The bike figures of one Python process (no cluster), beside Spokes' own
    one-process figures: Milano, users x 20 paths at time scale 0 (user-steps per
    second), and users x 5 paths at time scale 1, move time 0.2 s (pace against real time)."""
    users = 200 if QUICK else 1_000
    best = 0.0
    for _ in range(runs):
        results, stations, counts, wall = asyncio.run(ride_in_process(users, 1, 20, 0.1, 0))
        holds, text = conservation(counts, stations.bikes, stations.slots, sum(r[1] for r in results))
        if not holds:
            emit("bikes_local", users=users, steps_per_second=None, error=f"conservation failed: {text}")
            return
        best = max(best, sum(r[0] for r in results) / wall)
    emit("bikes_local", users=users, paths=20, steps_per_second=best, version=f"Python {sys.version.split()[0]}, asyncio, one process")
    note(f"bikes, Milano, {users} users x 20 paths at time scale 0, one asyncio process: {best:,.0f} user-steps/s")
    real_users = 1_000 if QUICK else 5_000
    results, stations, counts, wall = asyncio.run(ride_in_process(real_users, 1, 5, 0.2, 1))
    holds, text = conservation(counts, stations.bikes, stations.slots, sum(r[1] for r in results))
    ideal = max(r[0] for r in results) * 0.2 - 0.2
    if not holds:
        emit("bikes_real_time", users=real_users, pace=None, error=f"conservation failed: {text}")
        return
    emit("bikes_real_time", users=real_users, pace=ideal / wall, seconds=wall)
    note(f"bikes, Milano, {real_users} users x 5 paths at time scale 1, one asyncio process: "
         f"{ideal:.2f} s of travel in {wall:.2f} s wall (pace {ideal / wall:.3f})")


def check_against_spokes(spokes):
    """Runs users one at a time (reproducible) in the port and in `spokes simulate
    --workers 1`, and compares moves, failed takes and leaves, and every station's bikes."""
    users, paths = 50, 20
    report = json.loads(subprocess.run(
        [spokes, "simulate", "--users", str(users), "--paths", str(paths), "--seed", "1", "--time-scale", "0",
         "--workers", "1", "--json"], stdout=subprocess.PIPE, check=True, text=True).stdout)
    results, stations, _, _ = asyncio.run(ride_in_process(users, 1, paths, 0.1, 0, one_at_a_time=True))
    mine = {"totalMoves": sum(r[0] for r in results), "failedTakes": sum(r[3] for r in results),
            "failedLeaves": sum(r[4] for r in results), "totalPaths": sum(r[2] for r in results)}
    theirs = {key: report[key] for key in mine}
    same_stations = stations.bikes == [s["freeBikes"] for s in report["stations"]]
    print(json.dumps({"port": mine, "spokes": theirs, "same_final_stations": same_stations}))
    return mine == theirs and same_stations


# MARK: - Dask


def make_certificates(directory):
    """A throwaway certificate authority and one node certificate it signed (EC P-256, for
    127.0.0.1, valid a day), as PEM files in `directory`: ca.pem, node.pem, node.key. The
    scheduler, every worker and the client present the node certificate and trust only
    this authority (Dask's mutual TLS). Raises with openssl's own words when it fails."""
    def path(name):
        return os.path.join(directory, name)

    def openssl(*arguments):
        done = subprocess.run(["openssl", *arguments], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"openssl {arguments[0]} failed: {done.stderr.strip()}")

    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *curve, "-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "1",
            "-subj", "/CN=spokes-bench throwaway CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", *curve, "-keyout", path("node.key"), "-out", path("node.csr"), "-subj", "/CN=127.0.0.1")
    with open(path("node.ext"), "w") as extensions:
        extensions.write("basicConstraints=critical,CA:FALSE\n"
                         "keyUsage=critical,digitalSignature\n"
                         "extendedKeyUsage=serverAuth,clientAuth\n"
                         "subjectAltName=IP:127.0.0.1\n"
                         "subjectKeyIdentifier=hash\n"
                         "authorityKeyIdentifier=keyid,issuer\n")
    openssl("x509", "-req", "-in", path("node.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
            "-CAcreateserial", "-out", path("node.pem"), "-days", "1", "-extfile", path("node.ext"))


class Dask:
    """A Dask.distributed cluster: `dask scheduler` and `dask worker` processes on
    127.0.0.1, this process the client. With `tls`, every connection is mutual TLS with
    the certificates in the directory named by $BENCH_TLS_DIRECTORY (make_certificates),
    and the client refuses anything unencrypted."""
    name = "dask"

    def __init__(self, workers, threads, tls=False):
        import dask
        import distributed
        self.threads = threads
        port = free_port()
        self.launched = time.monotonic()
        if tls:
            directory = os.environ.get(TLS_DIRECTORY)
            if not directory or not os.path.isfile(os.path.join(directory, "node.pem")):
                raise RuntimeError(f"dask-tls: no certificates: ${TLS_DIRECTORY} must name a directory made by make_certificates")
            ca, cert, key = (os.path.join(directory, name) for name in ("ca.pem", "node.pem", "node.key"))
            from distributed.security import Security
            self.security = Security(tls_ca_file=ca, tls_client_cert=cert, tls_client_key=key, require_encryption=True)
            secured = ["--protocol", "tls", "--tls-ca-file", ca, "--tls-cert", cert, "--tls-key", key]
        else:
            self.security, secured = None, []
        self.address = f"{'tls' if tls else 'tcp'}://127.0.0.1:{port}"
        self.secured = secured
        self.scheduler = spawn(["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"] + secured)
        self.workers = []
        self._spawn_workers(workers)
        from distributed import Client
        deadline = time.monotonic() + 60
        while True:
            try:
                self.client = Client(self.address, timeout=2, security=self.security)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        try:
            self.client.wait_for_workers(workers, timeout=60)
        except BaseException:
            self.client.close()
            raise
        self.version = f"dask {dask.__version__}, distributed {distributed.__version__}"
        if tls:
            clear = [address for address in self.client.scheduler_info()["workers"] if not address.startswith("tls://")]
            if clear:
                self.client.close()
                raise RuntimeError(f"dask-tls: workers listening without TLS: {', '.join(clear)}")
            # What the client and the scheduler agreed on, e.g. TLSv1.3 TLS_AES_256_GCM_SHA384.
            cipher, protocol, _ = self.client.scheduler_comm.comm.extra_info["cipher"]
            self.version += f", {protocol} {cipher}"

    def _spawn_workers(self, count):
        for _ in range(count):
            self.workers.append(spawn(["dask", "worker", self.address, "--host", "127.0.0.1", "--nthreads", str(self.threads),
                                       "--no-dashboard", "--memory-limit", "0", "--name", f"w{len(self.workers)}"]
                                      + self.secured))

    def grow(self, workers):
        """Adds workers until there are `workers`, and waits for them."""
        self._spawn_workers(workers - len(self.workers))
        self.client.wait_for_workers(workers, timeout=60)

    def map(self, function, items):
        return self.client.gather(self.client.map(function, items, pure=False))

    def call(self, function, item):
        return self.client.submit(function, item, pure=False).result()

    def worker_pids(self):
        return [worker.pid for worker in self.workers]

    def head_pid(self):
        return self.scheduler.pid

    def busy_worker(self):
        """A worker process (the last one that has some) running tasks now."""
        names = {address: info["name"] for address, info in self.client.scheduler_info()["workers"].items()}
        busy = {names.get(address) for address, keys in self.client.processing().items() if keys}
        for index in reversed(range(len(self.workers))):
            if f"w{index}" in busy:
                return self.workers[index]
        return None

    def kill(self, worker):
        # The whole worker, as a machine that dies: the nanny and its worker process.
        signal_members(session_members(worker.pid), signal.SIGKILL)

    def bikes(self, users, paths, seed, seconds_per_move):
        counts = milano()
        stations = self.client.submit(StationLedger, counts, users, actor=True, workers=[self.first_worker_address()]).result()
        start = time.monotonic()
        futures = self.client.map(dask_rider, range(users), stations=stations, seed=seed, paths=paths,
                                  station_count=len(counts), seconds_per_move=seconds_per_move, pure=False)
        results = self.client.gather(futures)
        bikes, slots, progress = stations.snapshot().result()
        wall = time.monotonic() - start
        del futures, stations
        return results, bikes, slots, progress, counts, wall

    def first_worker_address(self):
        for address, info in self.client.scheduler_info()["workers"].items():
            if info["name"] == "w0":
                return address
        raise RuntimeError("no worker w0")

    def close(self):
        try:
            self.client.close()
        finally:
            stop_all()


# MARK: - Ray


class Ray:
    name = "ray"
    # Nodes join one at a time. Two `ray start --address` on one machine at once race for
    # the session's socket names: the second raylet aborts with "bind: Address already
    # in use" (its plasma store socket, in raylet.N.out) and `ray start` fails with "The
    # current node timed out during startup". That, not the machine's size, is why 4 nodes
    # and recovery (3 nodes) failed before; the driver's later "Failed to connect to GCS
    # within 60 seconds" came from stopping the head under a still-connected driver.

    def __init__(self, workers, threads):
        import ray
        self.ray = ray
        self.version = f"ray {ray.__version__}"
        self.port = free_port()
        self.env = {"RAY_USAGE_STATS_ENABLED": "0"}
        self.common = ["--node-ip-address", "127.0.0.1", "--num-cpus", str(threads), "--block", "--disable-usage-stats"]
        self.launched = time.monotonic()
        head = ["ray", "start", "--head", "--port", str(self.port), "--include-dashboard", "false"]
        if os.environ.get("BENCH_RAY_SYSTEM_CONFIG"):  # for experiments only; the figures use Ray's defaults
            head += ["--system-config", os.environ["BENCH_RAY_SYSTEM_CONFIG"]]
        self.head = spawn(head + self.common, self.env)
        self.workers = []
        deadline = time.monotonic() + 90
        while True:
            try:
                ray.init(address=f"127.0.0.1:{self.port}", logging_level="ERROR", log_to_driver=False)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        # ray.init installs a C++ handler that ends this process on SIGTERM without
        # running Python's cleanup; ours stops the cluster first.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
        try:
            self.grow(workers)
        except BaseException:
            ray.shutdown()  # before the head goes: a driver left connected aborts after 60 s
            raise
        self.remote_noop = ray.remote(num_cpus=1)(noop)
        self.remote_nap = ray.remote(num_cpus=1, max_retries=3)(nap)
        self.remote_stamped = ray.remote(num_cpus=1, max_retries=3)(stamped_nap)
        self.functions = {noop: self.remote_noop, nap: self.remote_nap, stamped_nap: self.remote_stamped}

    def alive(self):
        return len([node for node in self.ray.nodes() if node["Alive"]])

    def grow(self, nodes):
        """Adds nodes, one at a time (see above), until there are `nodes` (the head is one)."""
        while 1 + len(self.workers) < nodes:
            self.workers.append(spawn(["ray", "start", "--address", f"127.0.0.1:{self.port}"] + self.common, self.env))
            deadline = time.monotonic() + 60
            while self.alive() < 1 + len(self.workers):
                if time.monotonic() > deadline or self.workers[-1].poll() is not None:
                    raise RuntimeError(f"ray node {1 + len(self.workers)} did not join (see raylet.*.out in /tmp/ray/session_latest/logs)")
                time.sleep(0.05)

    def map(self, function, items):
        remote = self.functions[function]
        return self.ray.get([remote.remote(item) for item in items])

    def call(self, function, item):
        return self.ray.get(self.functions[function].remote(item))

    def worker_pids(self):
        return [worker.pid for worker in self.workers]

    def head_pid(self):
        return self.head.pid

    def busy_worker(self):
        """A worker node (not the head; the last that has some) running stamped_nap now:
        Ray names a worker process after the task it runs (ray::stamped_nap)."""
        running = set()
        for pid in _processes():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                    if not cmdline.read().startswith(b"ray::stamped_nap"):
                        continue
            except (FileNotFoundError, ProcessLookupError):
                continue
            stat = _stat(pid)
            if stat is not None:
                running.add(stat[2])  # its session: the `ray start` of its node
        for worker in reversed(self.workers):
            if worker.pid in running:
                return worker
        return None

    def kill(self, worker):
        # The whole node: `ray start`, its raylet and agents, and the worker processes,
        # which the raylet puts in process groups of their own (a worker left running
        # would finish its task and return the result straight to the driver).
        signal_members(session_members(worker.pid), signal.SIGKILL)

    def bikes(self, users, paths, seed, seconds_per_move):
        ray = self.ray
        counts = milano()
        stations = ray.remote(num_cpus=0)(StationLedger).remote(counts, users)
        rider = ray.remote(num_cpus=1)(ray_rider)
        ray.get(stations.__ray_ready__.remote())
        # At most one rider per CPU in flight, as Spokes runs one per slot. Submitted all
        # at once, Ray lends the CPU of a rider blocked in ray.get to a queued rider and
        # starts a worker process for it, again and again: 1,000 riders on 3 nodes x 4
        # CPUs ran dozens of worker processes (load average 54 on 2 cores). This is Ray's
        # documented pattern for limiting pending tasks (ray.wait).
        slots = int(ray.cluster_resources().get("CPU", 1))
        start = time.monotonic()
        refs, in_flight = [], []
        for user in range(users):
            if len(in_flight) >= slots:
                _, in_flight = ray.wait(in_flight, num_returns=1)
            ref = rider.remote(user, stations, seed, paths, len(counts), seconds_per_move)
            refs.append(ref)
            in_flight.append(ref)
        results = ray.get(refs)
        bikes, slots, progress = ray.get(stations.snapshot.remote())
        wall = time.monotonic() - start
        ray.kill(stations)
        return results, bikes, slots, progress, counts, wall

    def close(self):
        try:
            self.ray.shutdown()  # before the head goes: a driver left connected aborts after 60 s
        finally:
            stop_all()


def DaskTLS(workers, threads):
    """Dask with mutual TLS (the `dask-tls` column)."""
    return Dask(workers, threads, tls=True)


SYSTEMS = {"dask": Dask, "dask-tls": DaskTLS, "ray": Ray}


def main():
    if SYSTEM == "python":
        if "--check-spokes" in sys.argv:
            sys.exit(0 if check_against_spokes(sys.argv[sys.argv.index("--check-spokes") + 1]) else 1)
        python_bikes(1 if QUICK else 3)
        return
    if STAGE is None:
        if STAGES:
            stages = STAGES
        elif QUICK:
            stages = ["small", "grown"]
        else:
            stages = ["start", "noop", "scaling-1", "scaling-2", "scaling-4", "bikes", "recovery"]
        unknown = [name for name in stages if not known_stage(name)]
        if unknown:
            print(f"bench_peers.py: --stages: unknown stage {', '.join(unknown)} "
                  f"(known: small, grown, start, noop, scaling-N, bikes, recovery)", file=sys.stderr)
            sys.exit(2)
        if SYSTEM != "dask-tls":
            run_stages(stages)
            return
        with tempfile.TemporaryDirectory(prefix="spokes-bench-tls-") as directory:
            try:
                make_certificates(directory)
            except (OSError, RuntimeError) as error:
                note(f"cannot make the throwaway TLS certificates: {error}")
                sys.exit(1)
            os.environ[TLS_DIRECTORY] = directory
            run_stages(stages)
        return
    stage(SYSTEMS[SYSTEM], 1 if QUICK else 3)


def known_stage(name):
    fixed = {"small", "grown", "start", "noop", "bikes", "recovery"}
    return name in fixed or (name.startswith("scaling-") and name[len("scaling-"):].isdigit() and int(name[len("scaling-"):]) > 0)


def run_stages(stages):
    """Runs each stage in a Python process of its own, passing its figures on."""
    # A stage's stderr (Ray's driver echoes its raylets' logs there) goes to a log
    # file beside the results; our own notes are shown.
    logs = os.environ.get("BENCH_LOGS", ".")
    for name in stages:
        began = time.monotonic()
        log_path = os.path.join(logs, f"{SYSTEM}-{name}.log")
        record = os.path.join(logs, f"{SYSTEM}-{name}.spawned")
        open(record, "w").close()
        with open(log_path, "w") as log:
            try:
                child = subprocess.run([sys.executable, __file__, SYSTEM, "--stage", name] + (["--quick"] if QUICK else []),
                                       stdout=subprocess.PIPE, stderr=log, text=True, timeout=1200,
                                       env={**os.environ, "BENCH_SPAWNED": record})
                status = child.returncode
                output = child.stdout
            except subprocess.TimeoutExpired as timeout:
                status, output = "timeout", timeout.stdout or ""
                if isinstance(output, bytes):
                    output = output.decode(errors="replace")
            finally:
                sweep(record)  # also when this process is interrupted (run() has killed the stage)
        os.remove(record)
        with open(log_path, errors="replace") as log:
            for line in log:
                if line.startswith(f"{SYSTEM}: "):
                    print(line, end="", file=sys.stderr, flush=True)
        lines = [line for line in (output or "").splitlines() if line.startswith("{")]
        for line in lines:
            print(line, flush=True)
        note(f"stage {name}: {time.monotonic() - began:.1f} s" + ("" if status == 0 else f", ended with {status} (see {log_path})"))


def stage(system, runs):
    noops = 2_000 if QUICK else 20_000
    round_trips = 200 if QUICK else 1_000
    if STAGE == "small":
        with timed("cold start and memory"):
            cluster = cold_start_and_memory(system, 1, keep=True)
        try:
            with timed("no-op throughput and round trip"):
                noop_and_round_trip(cluster, runs, noops, round_trips)
        finally:
            with timed("stop"):
                cluster.close()
    elif STAGE == "grown":
        with timed("start 1 worker x 4 slots"):
            cluster = system(workers=1, threads=4)
        try:
            for nodes in (1, 2):
                with timed(f"grow to {nodes} and scaling on {nodes}"):
                    cluster.grow(nodes)
                    scaling(cluster, runs, nodes)
            with timed("grow to 3 and bikes"):
                cluster.grow(3)
                bikes(cluster, runs)
            if system is Ray:
                why = ("skipped in --quick: Ray restarts a SIGKILLed node's tasks only once its GCS has marked the node "
                       "dead for missed health checks (about 14 s here with Ray's defaults), which with the tasks' "
                       "3 s would take a quick run past 2 minutes; the full run measures it")
                note(why)
                emit("recovery", seconds=None, note=why)
            else:
                with timed("recovery"):
                    seconds, why = recovery_once(cluster)
                emit("recovery", seconds=seconds, error=why, samples=[seconds] if seconds is not None else [])
        finally:
            with timed("stop"):
                cluster.close()
    elif STAGE == "start":
        cold_start_and_memory(system, runs)
    elif STAGE == "noop":
        with_cluster(system, 2, 1, lambda cluster: noop_and_round_trip(cluster, runs, noops, round_trips))
    elif STAGE.startswith("scaling-"):
        nodes = int(STAGE.split("-")[1])
        with_cluster(system, nodes, 4, lambda cluster: scaling(cluster, runs, nodes))
    elif STAGE == "bikes":
        with_cluster(system, 3, 4, lambda cluster: bikes(cluster, runs))
    elif STAGE == "recovery":
        recovery(system, runs)
    else:
        raise ValueError(f"unknown stage {STAGE!r}")


def with_cluster(system, workers, threads, body):
    cluster = system(workers=workers, threads=threads)
    try:
        body(cluster)
    finally:
        cluster.close()


def cold_start_and_memory(system, runs, keep=False):
    """4. Cold start (best of `runs`) and 5. memory, on the idle cluster of the last run;
    with `keep`, that cluster is returned running."""
    colds = []
    for run in range(runs):
        cluster = system(workers=2, threads=1)
        try:
            cluster.call(noop, 1)
            colds.append(time.monotonic() - cluster.launched)
            if run == runs - 1:
                time.sleep(2)  # idle
                version = cluster.version
                sizes = [tree_rss(pid) for pid in cluster.worker_pids()]
                worker_rss = min(sizes) if sizes and None not in sizes else None
                head_rss = tree_rss(cluster.head_pid())
        except BaseException:
            cluster.close()
            raise
        if not (keep and run == runs - 1):
            cluster.close()
    emit("cold_start", seconds=min(colds), version=version)
    unread = worker_rss is None or head_rss is None
    emit("memory", worker_bytes=worker_rss, head_bytes=head_rss,
         error="cannot read the resident size from /proc" if unread else None)
    return cluster if keep else None


def noop_and_round_trip(cluster, runs, noops, round_trips):
    """1. No-op throughput and 2. round trip, on a 2-worker x 1-slot cluster."""
    cluster.map(noop, range(100))
    rates = []
    for _ in range(runs):
        start = time.monotonic()
        results = cluster.map(noop, range(noops))
        assert len(results) == noops
        rates.append(noops / (time.monotonic() - start))
    emit("noop_throughput", tasks=noops, tasks_per_second=max(rates), version=cluster.version)
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


def scaling(cluster, runs, nodes):
    """3. Slot-bound scaling: 200 x nap 0.1 s, 4 slots per node."""
    cluster.map(noop, range(10))
    walls = []
    for _ in range(runs):
        start = time.monotonic()
        cluster.map(nap, [0.1] * 200)
        walls.append(time.monotonic() - start)
    ideal = 200 * 0.1 / (4 * nodes)
    emit("scaling", nodes=nodes, seconds=min(walls), efficiency=ideal / min(walls))


def bikes(cluster, runs):
    """6. The bike workload on 3 workers x 4 slots: Milano, users x 20 paths at time
    scale 0, one task per user, the stations in one actor; user-steps per second. The
    quick run has 60 users, 5 rounds of 12 slots (Spokes' quick run has 200; the rate is
    per step)."""
    users = 60 if QUICK else 1_000
    # Warm-up, not timed: one user per slot, one path each, so every worker process
    # exists and has the ride code before the clock starts (Ray starts a new node's
    # worker processes on demand).
    cluster.bikes(12, 1, 2, 0.0)
    best = 0.0
    for _ in range(runs):
        results, bikes_after, slots_after, progress, counts, wall = cluster.bikes(users, 20, 1, 0.0)
        holding = sum(result[1] for result in results)
        holds, text = conservation(counts, bikes_after, slots_after, holding)
        ledger = [tuple(p) for p in progress] == [tuple(r) for r in results]
        if not holds or not ledger or any(result[2] != 20 for result in results):
            emit("bikes_cluster", users=users, steps_per_second=None,
                 error=f"conservation {'held' if holds else 'FAILED'} ({text}); ledger {'agrees' if ledger else 'DISAGREES'} with the results")
            note(f"bikes: check failed: {text}")
            return
        steps = sum(result[0] for result in results)
        best = max(best, steps / wall)
        note(f"bikes, Milano, {users} users x 20 paths, 3 workers x 4 slots: {steps} steps in {wall:.2f} s ({text})")
    emit("bikes_cluster", users=users, paths=20, steps_per_second=best)


def recovery_once(cluster):
    """3 workers x 4 slots run 8 tasks of 3 s; after 1 s a worker running some of them
    (not the first: Spokes never kills its coordinator) is SIGKILLed; recovery is the time
    until the last task that was lost has started again elsewhere. Returns seconds or None."""
    # Warm-up, not timed: a task per slot, so every worker has its worker processes
    # (Ray starts them on demand, and a task is not running until its process is).
    cluster.map(nap, [0.3] * 12)
    outcome = {}

    def job():
        try:
            outcome["results"] = cluster.map(stamped_nap, [3.0] * 8)
        except Exception as error:  # reported below
            outcome["error"] = repr(error)

    runner = threading.Thread(target=job, daemon=True)
    runner.start()
    time.sleep(1.0)
    victim = cluster.busy_worker()
    if victim is None:
        runner.join(timeout=120)
        return None, "no worker other than the first was running a task after 1 s"
    killed = time.monotonic()
    cluster.kill(victim)
    runner.join(timeout=120)
    if "results" not in outcome:
        return None, outcome.get("error", "the job did not finish within 120 s of the kill")
    restarted = [start - killed for start, _ in outcome["results"] if start > killed]
    if not restarted:
        return None, "no task started again after the kill"
    return max(restarted), None


def recovery(system, runs):
    recoveries, notes = [], []
    for _ in range(runs):
        cluster = system(workers=3, threads=4)
        try:
            seconds, why = recovery_once(cluster)
        finally:
            cluster.close()
        if seconds is None:
            notes.append(why)
        else:
            recoveries.append(seconds)
        note(f"recovery run: {why or f'{seconds:.3f} s'}")
    # A run that could not measure is noted; the figure fails only when no run measured it.
    emit("recovery", seconds=min(recoveries) if recoveries else None, samples=recoveries,
         **({"note": "; ".join(notes)} if recoveries and notes else {"error": "; ".join(notes)} if notes else {}))


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
    finally:
        stop_all()
