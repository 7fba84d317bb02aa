import Foundation
import SpokesBikes
import SpokesCluster
import SpokesJobs
import SpokesConcurrency
import SpokesNode
import SpokesSimulatedCluster
import Synchronization

/// Whole nodes in the simulator (issue 28 §2), `simulate-cluster --model nodes`: per seed,
/// N nodes as `spokes node` assembles them (``NodeAssembly``: membership, prober,
/// handshake, placement, workers, the Raft host, both kinds of replicated jobs, the job
/// store and journal) on one ``SimulatedCluster`` (a simulated network, a virtual clock),
/// each on a temporary data directory of its own; real ``ClusterClient``s submit maps of
/// `bench.sleep`, cancel one, and submit a small bike job (and ``NodesClients`` a sweep,
/// `result --wait`, `cancel` and `jobs` clients, the commands' code); faults drawn from the seed
/// crash and restart nodes, pause them, cut them off both ways, one way or from their job's
/// replicas only, lose datagrams, delay and reorder what is sent, slow a node's disk or
/// fill it, and leap a node's clock. ``NodesSafety`` is checked after every event, and
/// ``NodesInvariants`` at the end. See Docs/simulator.md, "Whole nodes".
///
/// Deterministic when played by `simulate-cluster` (``playAllBlocking(seeds:options:traceLines:showEveryTrace:print:report:)``):
/// every task of the process then runs on one thread, one job at a time
/// (``SimulationExecutor``), so a seed runs the same jobs in the same order every time,
/// and its trace hash, which counts them, says so. Played from a test on the cooperative
/// pool, two runs of one seed may interleave differently (the fault plan and the jobs are
/// the same).
public enum NodesModel {
    /// How one seed is played.
    public struct Options: Sendable {
        public var nodes: Int
        /// Maps of `bench.sleep` submitted, the last one cancelled by its client.
        public var maps = 3
        public var tasksPerMap = 8
        /// Small bike jobs submitted (a few users on a network of a few stations).
        public var bikeJobs = 1
        /// Users of each bike job (drawn from the seed), and the paths each rides.
        public var bikeUsers: ClosedRange<Int> = 3...8
        public var bikePaths = 2
        /// The share of crashes, pauses and cuts aimed at a running job's coordinator.
        public var aimAtCoordinators = 0.5
        public var faultCount: ClosedRange<Int> = 1...3
        /// The kinds of fault a plan draws from (every kind by default).
        public var faultKinds = Fault.Kind.allCases
        /// Faults of the seed's plan left out, by their place in it (from 0): how a
        /// failing seed's shrunk run is replayed (`--drop`).
        public var droppedFaults: Set<Int> = []
        /// When each client submits its job, in virtual seconds after the mesh formed,
        /// drawn from the seed (nil: within the first half of ``faultWindow``). A test
        /// with planned faults fixes it.
        public var submitWithin: ClosedRange<Double>?
        /// Seconds after its submission at which the last map's client cancels it.
        public var cancelAfter: ClosedRange<Double> = 0.5...3
        /// Faults begin within this many virtual seconds after the jobs are submitted.
        public var faultWindow = 20.0
        /// Virtual seconds after the last fault ends within which every client has had its
        /// answer and every accepted job its stored report.
        public var livenessBound = 120.0
        /// When (virtual seconds after the mesh formed) a second process with
        /// ``twinOf``'s name starts on a host of its own, a newer incarnation of a name
        /// that runs (nil: none): its greeting must be refused while the member that holds
        /// the name is heard from, and it yields the name (``NodesSafety``'s membership
        /// checks, `--scenario twin-name`).
        public var twinAt: Double?
        /// The node whose name the twin takes.
        public var twinOf = 1
        /// Breaks the contract on purpose (the checker's own test): at this time (virtual
        /// seconds after the mesh formed) the leader of a bike job's group is handed a
        /// batch of the job's epoch counting user 0's result from an attempt the committed
        /// book never began, as a coordinator that took the job over from another book than
        /// the committed one (one with that attempt begun) would make. ``NodesSafety`` must
        /// catch it.
        public var staleBatchAt: Double?
        /// Breaks the contract on purpose (the checker's own test): this node's membership
        /// is configured to suspect a silent member only after a hundred times the
        /// cluster's suspect timeout (and to take it for dead a hundred times later), so it
        /// shows a member alive long after nothing arrived from it. ``NodesSafety``, which
        /// holds every node to the cluster's timeouts (``NodesFailureDetection``), must
        /// catch it.
        public var slowSuspicionOf: Int?
        /// A rolling upgrade (`--scenario upgrade`): this node speaks only the protocols
        /// below 7 (``ProtocolVersions/oneJobLayer``) until it crashes, and every protocol
        /// of this build once it restarts. Until then the others keep every job in the
        /// group formats of the release before (`taskjob-`, `bikejob-`; ``JobGroupFormat``)
        /// and take jobs over from them; after it, new jobs go in `job-` groups while the
        /// old ones run on. (This build's code stands in for the release before.)
        public var upgradedOnRestart: Int?

        public init(nodes: Int) { self.nodes = nodes }

        /// A rolling upgrade under the seed's faults (`--scenario upgrade`): the last node
        /// is of the release before until it crashes (``upgradedOnRestart``), and crashes
        /// are common.
        public static func upgrade(nodes: Int) -> Options {
            var options = Options(nodes: nodes)
            options.upgradedOnRestart = nodes - 1
            options.faultKinds = [.crash, .pause, .partition, .loss, .slowDisk]
            return options
        }

        /// A twin of a running node's name (`--scenario twin-name`): a second process with
        /// n1's name starts on its own host while maps and a bike job run, with the
        /// seed's faults (not aimed at coordinators, so the twin's name holder is hit too).
        public static func twinName(nodes: Int) -> Options {
            var options = Options(nodes: nodes)
            options.twinAt = 2
            options.twinOf = min(1, nodes - 1)
            options.aimAtCoordinators = 0
            return options
        }

        /// Bike jobs failing over (`--scenario bike-failover`), the real replicated bike
        /// jobs in place of a model of them: two longer bike jobs and no maps, submitted
        /// at once, every crash, pause and cut aimed at a running job's coordinator, so
        /// take-overs from the committed book (after torn writes, during elections) are
        /// the common case, with every replica's book checked as it runs.
        public static func bikeFailover(nodes: Int) -> Options {
            var options = Options(nodes: nodes)
            options.maps = 0
            options.bikeJobs = 2
            options.bikeUsers = 10...20
            options.bikePaths = 8
            options.submitWithin = 0...1
            options.faultWindow = 6
            options.aimAtCoordinators = 1
            options.faultKinds = [.crash, .pause, .partition, .oneWay, .replicaCut, .slowDisk]
            return options
        }
    }

    /// One fault of a plan: what, to which node, from when, for how long (virtual seconds).
    public struct Fault: Sendable, Hashable, CustomStringConvertible {
        public enum Kind: String, Sendable, Hashable, CaseIterable {
            /// The node stops without a goodbye; it restarts on its disk when the fault ends.
            case crash
            /// The node is cut off from every other host, both ways.
            case partition
            /// What the node sends to every other host is lost; what it is sent arrives.
            case oneWay = "one-way"
            /// A share of every datagram is lost (streams lose nothing).
            case loss
            /// The node's process stops (``SimulatedCluster/pause(_:)``): its timers do not
            /// wake, nothing reaches it or leaves it; it resumes where it was when the
            /// fault ends, its overdue timers firing at once. Its job groups elect another
            /// leader meanwhile, while it stays alive.
            case pause
            /// The node is cut off both ways from the other replicas of the job it
            /// coordinates (from every other node when it coordinates none); clients
            /// still reach it, so its client hears it stop the job when another replica
            /// takes the job over.
            case replicaCut = "replica-cut"
            /// What the node sends (everything on the network when ``Fault/everyHost``)
            /// arrives late, by a delay drawn for each datagram and each chunk of a stream
            /// between 1 ms and ``Fault/amount`` seconds
            /// (``SimulatedNetwork/delay(from:by:)``): datagrams overtake one another, a
            /// stream stays in order within itself.
            case delay
            /// Each write and flush of the node's disk takes between 1 ms and
            /// ``Fault/amount`` virtual seconds (``SimulatedDisk/slow(on:by:seed:)``):
            /// its Raft log's flushes, its journal's and its store's lines come late.
            case slowDisk = "slow-disk"
            /// The node's disk has room for ``Fault/amount`` more bytes (``SimulatedDisk/capacity``),
            /// then refuses writes with `ENOSPC`; room comes back when the fault ends.
            case fullDisk = "full-disk"
            /// The node's own clock leaps ``Fault/amount`` seconds forward (its timers due by
            /// then fire at once; the others' clocks stay) and its wall clock as far back
            /// (``PausableClock/jump(by:wallBy:)``); when the fault ends the wall clock is
            /// stepped back in line (NTP), the monotonic one keeps its leap.
            case clockJump = "clock-jump"
        }

        public var kind: Kind
        /// The node hit, unless ``atCoordinator`` finds a coordinator as the fault begins.
        public var node: Int
        /// A crash, pause or cut aimed at the coordinator of a job running when it begins
        /// (the take-over path), if any job runs then.
        public var atCoordinator: Bool
        public var start: Double
        public var duration: Double
        /// The share of datagrams lost (``Kind/loss``); for a crash, the share of each
        /// file's unflushed bytes the disk keeps (a torn write).
        public var rate: Double
        /// How much: the longest delay in seconds (``Kind/delay``), the longest latency of
        /// a write in seconds (``Kind/slowDisk``), the bytes of room left
        /// (``Kind/fullDisk``), the seconds the clock leaps (``Kind/clockJump``).
        public var amount: Double = 0
        /// A ``Kind/delay`` of everything on the network, not only what the node sends.
        public var everyHost = false
        /// Aimed at the node after the running job's coordinator (by index), not at the
        /// coordinator: another of its replicas (a test's plan: one of the voters while
        /// the coordinator is cut off).
        public var besideCoordinator = false

        public var end: Double { start + duration }

        public var description: String {
            let target = everyHost ? "every host" : "\(atCoordinator ? "a running job's coordinator, else " : besideCoordinator ? "the node after a running job's coordinator, else " : "")n\(node)"
            let what = switch kind {
            case .loss: "loss \(Int(rate * 100))%"
            case .delay: "delay up to \(Int(amount * 1000)) ms of \(target)"
            case .slowDisk: "slow-disk up to \(Int(amount * 1000)) ms \(target)"
            case .fullDisk: "full-disk \(Int(amount)) bytes left \(target)"
            case .clockJump: "clock-jump \(String(format: "%.1f", amount)) s \(target)"
            default: "\(kind.rawValue) \(target)"
            }
            return "\(what) from \(String(format: "%.2f", start)) s for \(String(format: "%.2f", duration)) s"
        }
    }

    /// Faults drawn from `seed`, one after another (none overlaps the next), starting
    /// within `options.faultWindow` virtual seconds.
    public static func plan(seed: UInt64, options: Options) -> [Fault] {
        var random = SimulationRandom(seed: seed)
        let count = options.faultKinds.isEmpty ? 0 : random.integer(in: options.faultCount)
        var time = random.uniform(in: 0.5...(options.faultWindow / Double(max(count, 1))))
        var faults: [Fault] = []
        for _ in 0..<count {
            let kind = random.element(of: options.faultKinds)
            let node = random.index(below: options.nodes)
            let duration = random.uniform(in: 1...8)
            let rate = kind == .loss ? random.uniform(in: 0.05...0.5) : kind == .crash ? random.uniform(in: 0...1) : 0
            let everyHost = kind == .delay && random.chance(0.5)
            let atCoordinator = random.chance(options.aimAtCoordinators) && kind != .loss && !everyHost
            let amount = switch kind {
            case .delay: random.uniform(in: 0.01...0.2)
            case .slowDisk: random.uniform(in: 0.01...0.5)
            case .fullDisk: Double(random.integer(in: 0...4096))
            case .clockJump: random.uniform(in: 1...20)
            default: 0.0
            }
            faults.append(Fault(
                kind: kind, node: node, atCoordinator: atCoordinator, start: time, duration: duration, rate: rate, amount: amount, everyHost: everyHost))
            time += duration + random.uniform(in: 0.5...4)
        }
        return faults
    }

    /// What one seed did.
    public struct Verdict: Sendable {
        public var seed: UInt64
        public var faults: [Fault]
        /// The first invariant broken (nil: none).
        public var violation: String?
        /// FNV-1a over the run's events as the driver saw them (faults, clients' answers,
        /// the jobs' ends), at millisecond virtual times, and over ``jobsRun``.
        public var traceHash: UInt64
        /// Jobs the ``SimulationExecutor`` ran for the seed (in a unit test, with those of the
        /// other tests it ran meanwhile): two runs that interleaved differently almost never
        /// run the same number.
        public var jobsRun: Int
        /// The same over the events alone, without their times (see Docs/simulator.md on
        /// what stays the same between two runs of a seed).
        public var orderHash: UInt64
        /// The driver's events, one line each.
        public var trace: [String]
        public var virtualSeconds: Double
        public var wallSeconds: Double
        /// How many times ``NodesSafety`` checked the nodes (after every event), and the
        /// wall-clock seconds those checks took.
        public var safetyChecks = 0
        public var safetySeconds = 0.0

        public var failed: Bool { violation != nil }
    }

    /// Plays `seed` (with `faults` instead of the seed's plan when given).
    public static func play(seed: UInt64, options: Options, faults given: [Fault]? = nil) async -> Verdict {
        let faults = given ?? plan(seed: seed, options: options).enumerated().filter { !options.droppedFaults.contains($0.offset) }.map(\.element)
        let wallClock = RealClock()
        let started = wallClock.now
        let jobsBefore = SimulationExecutor.jobsRun
        let run: NodesRun
        do {
            run = try NodesRun(seed: seed, options: options, faults: faults)
        } catch {
            return Verdict(seed: seed, faults: faults, violation: "the cluster could not be made: \(error)", traceHash: 0, jobsRun: 0, orderHash: 0, trace: [], virtualSeconds: 0, wallSeconds: 0)
        }
        var violation: String?
        do {
            violation = try await run.play()
        } catch {
            violation = "the run could not go on: \(error)"
        }
        await run.tearDown()
        // A wait on the machine's clock in the teardown's last step is this seed's too.
        if let wait = SimulationExecutor.takeRealTimeWait(), violation == nil { violation = "\(RealTimeInSimulation(wait: wait))" }
        let wall = wallClock.now - started
        let trace = run.trace.lines
        let jobsRun = SimulationExecutor.jobsRun - jobsBefore
        var hasher = TraceHasher()
        hasher.combine(run.trace.hash)
        hasher.combine(jobsRun)
        return Verdict(
            seed: seed, faults: faults, violation: violation, traceHash: hasher.value, jobsRun: jobsRun, orderHash: run.trace.orderHash, trace: trace,
            virtualSeconds: run.virtualSeconds, wallSeconds: wall, safetyChecks: run.safety.checks, safetySeconds: run.safety.seconds)
    }
}

/// The driver's trace: lines with their virtual time, and their hash.
final class NodesTrace: Sendable {
    private let state = Mutex((lines: [String](), hasher: TraceHasher(), order: TraceHasher()))

    /// Records `line` (hashed) and `detail` (printed only: error messages name random job ids).
    func record(_ time: Double, _ line: String, detail: String = "") {
        state.withLock { state in
            state.hasher.combine((time * 1000).rounded())
            state.hasher.combine(line)
            state.order.combine(line)
            state.lines.append("\(String(format: "%9.3f", time)) \(line)\(detail.isEmpty ? "" : ": \(detail)")")
        }
    }

    var lines: [String] { state.withLock { $0.lines } }
    var hash: UInt64 { state.withLock { $0.hasher.value } }
    /// The hash of the lines alone, without their times: the same when a run saw the same
    /// events in the same order, however the pool's timing moved them.
    var orderHash: UInt64 { state.withLock { $0.order.value } }
}
