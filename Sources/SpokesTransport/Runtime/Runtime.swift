import FoundationEssentials
import SpokesConcurrency
import Synchronization

/// Where a node's shells take time, chance, the network and the disk from: the clock they
/// read, the sleeps their timers wait on, the seeds of their random choices, the TCP and
/// UDP they talk over, and the files they keep (Raft logs and snapshots). One value, handed to the `ClusterSystem` and from it to every
/// shell built on it, so that a test or the simulator can run the shells that ship under
/// a clock it moves itself (``VirtualClock``), a network it holds in memory
/// (``SimulatedNetwork``) and a disk that forgets unflushed writes at a crash
/// (``SimulatedDisk``), as FoundationDB swaps its network, disk and clock under the
/// same code. ``real`` is the behaviour of a node on a machine.
///
/// The invariant: no shell reads a clock, sleeps or opens a socket except through its
/// runtime. (Files a person hands the node, cluster.yaml and secrets, are read from the
/// machine's disk: they are the user's, not the node's state.) (Measurements that are about real time itself, a benchmark's or a log
/// line's wall time, read the real clocks directly.)
public struct Runtime: Sendable {
    public let clock: any RuntimeClock
    /// Where connections are made and datagrams sent.
    public let network: any RuntimeNetwork
    /// Where the node's durable state is kept.
    public let disk: any Disk
    private let seeds: @Sendable () -> UInt64
    /// Where a node's own protocol work runs (``protocolTask(_:)``) and its timers wake
    /// (``protocolSleep(for:)``): a thread of its own on a machine, so heartbeats, ticks
    /// and Raft never wait behind user tasks on the cooperative pool (issue 33); nil on
    /// the pool like everything else (a virtual runtime, whose sleeps its clock wakes).
    public let protocolExecutor: ProtocolExecutor?
    /// Where a node starting on this runtime takes its incarnation number.
    public let incarnations: IncarnationSequence

    /// A runtime; `incarnations` is a sequence of its own on `clock` unless given (runtimes
    /// whose nodes share names share one).
    public init(
        clock: any RuntimeClock, network: any RuntimeNetwork = SocketNetwork(), disk: any Disk = RealDisk(),
        protocolExecutor: ProtocolExecutor? = nil, incarnations: IncarnationSequence? = nil,
        seeds: @escaping @Sendable () -> UInt64
    ) {
        self.clock = clock
        self.incarnations = incarnations ?? IncarnationSequence(clock: clock)
        self.network = network
        self.disk = disk
        self.protocolExecutor = protocolExecutor
        self.seeds = seeds
    }

    /// The machine's monotonic clock, `Task.sleep`, its sockets, its files, seeds from the
    /// system's generator, and the protocol's thread (``protocolExecutor``; none when the
    /// environment sets ``protocolOnPoolVariable`` to 1, to measure the difference).
    public static let real = Runtime(
        clock: RealClock(), network: SocketNetwork(), disk: RealDisk(),
        protocolExecutor: ProcessInfo.processInfo.environment[protocolOnPoolVariable] == "1" ? nil : ProtocolExecutor(name: "spokes.protocol"),
        seeds: { UInt64.random(in: .min ... .max) })

    /// `SPOKES_PROTOCOL_ON_POOL=1` runs the real runtime's protocol work on the
    /// cooperative pool, as before issue 33: for measuring what its thread changes
    /// (BENCHMARKS.md), not for use.
    public static let protocolOnPoolVariable = "SPOKES_PROTOCOL_ON_POOL"

    /// Starts `operation` as a task that prefers the protocol's thread (its nonisolated
    /// code and the default actors it calls run there; unstructured tasks it makes do
    /// not), or an ordinary task where there is none.
    @discardableResult
    public func protocolTask(_ operation: sending @escaping () async -> Void) -> Task<Void, Never> {
        Task.preferring(protocolExecutor, operation: operation)
    }

    /// Sleeps as ``sleep(for:)``, but a real runtime's wake-up comes from the protocol's
    /// thread, not from the cooperative pool (where it would wait behind user tasks).
    /// For the protocol's timers, in tasks made with ``protocolTask(_:)``.
    public func protocolSleep(for seconds: Double) async throws {
        if let protocolExecutor, clock is RealClock {
            try await protocolExecutor.sleep(for: seconds)
        } else {
            try await clock.sleep(for: seconds)
        }
    }

    /// A runtime on `clock` (a ``VirtualClock``, or a node's view of one), `network` and
    /// `disk` whose seeds are drawn from `seed`, the same every run; its nodes' incarnations
    /// from `incarnations` (a sequence of its own by default).
    public static func virtual(
        _ clock: any RuntimeClock, network: any RuntimeNetwork = SocketNetwork(), disk: any Disk = RealDisk(), seed: UInt64 = 1,
        incarnations: IncarnationSequence? = nil
    ) -> Runtime {
        let generator = SeedSequence(seed)
        return Runtime(clock: clock, network: network, disk: disk, incarnations: incarnations, seeds: { generator.next() })
    }

    /// Seconds on this runtime's monotonic clock.
    public var now: Double { clock.now }

    /// Seconds since 1970 on this runtime's wall clock (see ``RuntimeClock/unixNow``).
    public var unixNow: Double { clock.unixNow }

    /// Suspends for `seconds` of this runtime's time (at least nothing); throws
    /// `CancellationError` if the task is cancelled first.
    public func sleep(for seconds: Double) async throws {
        try await clock.sleep(for: seconds)
    }

    /// A seed for a random generator of a shell's own (an election timeout's, a probe's).
    public func seed() -> UInt64 { seeds() }
}

/// splitmix64 behind a lock: the seeds of a virtual runtime.
private final class SeedSequence: Sendable {
    private let state: Mutex<UInt64>

    init(_ seed: UInt64) { state = Mutex(seed) }

    func next() -> UInt64 {
        state.withLock { state in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
