import Distributed
import Foundation
import SpokesCluster
import SpokesJobs
import SpokesConcurrency
import Synchronization

/// Nodes that ship, in the test's process, on one ``SimulatedNetwork`` and one
/// ``VirtualClock``: node `i` is host `127.0.0.(i+1)` of the network; nodes, systems and
/// clients added later each get the next host. Time moves only in
/// ``run(until:within:step:_:)`` (and ``complete(_:within:step:_:)``,
/// ``holds(_:for:step:_:)``), so a test of heartbeats, deaths and deadlines waits for no
/// real time and asserts no wall-clock bound.
///
/// How time moves: a step of virtual time is taken only once every task the last step
/// woke has run and gone back to sleep (``settle()``), which is exact because every job of
/// the process runs on one thread (``SimulationExecutor``): no job is ready. So a cluster
/// lives only inside a drain: the simulator's (``SimulationExecutor/run(_:)``) or a
/// test's (``SimulationExecutor/runInTurn(_:)``, the `.simulated` trait of `SpokesTestKit`);
/// made or driven anywhere else it throws ``OutsideSimulation``, never guesses.
///
/// Used by the tests (`SpokesClusterTestKit` re-exports it) and by the simulator's whole
/// nodes (`simulate-cluster --model nodes`), which start each node as `spokes node` does
/// (`startsNodes: false`) and crash and restart them (``restartNode(_:configure:)``).
public final class SimulatedCluster: Sendable {
    public let clock = VirtualClock()
    public let network: SimulatedNetwork
    /// The nodes started with the cluster, named `prefix` + index.
    public let nodes: [ClusterNode]
    private let seed: UInt64
    /// Hosts handed out so far (the next one is `127.0.0.(hosts+1)`).
    private let hosts: Atomic<Int>
    /// Nodes started later, systems and clients made here: stopped by ``stop()``.
    private let added = Mutex<(nodes: [ClusterNode], systems: [ClusterSystem])>(([], []))
    /// Nodes made again at the host of one of ``nodes`` (``restartNode(_:configure:)``), so far.
    private let restarts = Atomic<Int>(0)
    /// Systems hold their actors weakly, as a node does; tests keep theirs alive here.
    private let kept = Mutex<[any DistributedActor]>([])
    /// Each of ``nodes``' hosts' view of ``clock``, which ``pause(_:)`` stops (shared by
    /// every incarnation at that host).
    private let nodeClocks: [PausableClock]
    /// Every node's and client's incarnation numbers: one sequence, so of two started at
    /// one virtual instant under one name, the later is the newer.
    private let incarnations: IncarnationSequence

    /// Starts `count` nodes named `prefix0`, `prefix1`, ...; `configure` adjusts node
    /// `index`'s settings after the simulation's own (``settings(named:host:)``),
    /// `registry` gives its kinds, `faults` its injected faults and `durability` where it
    /// keeps its running jobs. `seed` draws the network's losses and the nodes' seeds.
    /// With `startsNodes` false the nodes are made and not started: their owner starts
    /// them (``NodeAssembly`` in the simulator). `disk` is node `index`'s disk (the
    /// machine's by default; a ``SimulatedDisk`` for crashes that lose unflushed writes).
    public init(
        _ count: Int, prefix: String = "n", seed: UInt64 = 1, startsNodes: Bool = true, configure: (Int, inout ClusterSettings) -> Void = { _, _ in },
        registry: (Int) -> TaskRegistry = { _ in TaskRegistry() }, faults: (Int) -> ScanSystem.Faults = { _ in .init() },
        durability: (Int) -> (any TaskJobDurability)? = { _ in nil }, disk: (Int) -> any Disk = { _ in RealDisk() }
    ) throws {
        guard SimulationExecutor.isCurrent else { throw OutsideSimulation() }
        let clock = clock
        let network = SimulatedNetwork(clock: clock, seed: seed)
        self.network = network
        self.seed = seed
        hosts = Atomic(count)
        let nodeClocks = (0..<count).map { _ in PausableClock(base: clock) }
        self.nodeClocks = nodeClocks
        let incarnations = IncarnationSequence(clock: clock)
        self.incarnations = incarnations
        nodes = try (0..<count).map { index in
            var settings = Self.settings(named: "\(prefix)\(index)", host: Self.host(index))
            configure(index, &settings)
            let runtime = Self.runtime(nodeClocks[index], network, host: index, seed: seed, disk: disk(index), incarnations: incarnations)
            let node = try ClusterNode(settings: settings, registry: registry(index), faults: faults(index), logger: Self.nodeLogger, runtime: runtime)
            if startsNodes {
                node.start()
                TaskJobs.host(on: node, durability: durability(index))
            }
            return node
        }
    }

    /// The network address of node `index` (of host `index`).
    public static func host(_ index: Int) -> String { "127.0.0.\(index + 1)" }

    /// The index of the host of `address` (a host, or `host:port`): ``host(_:)``'s
    /// inverse; nil for any other address. The simulator asks it of every chunk and
    /// datagram it delivers, so it reads the string's bytes in place (`withUTF8`; through
    /// the `utf8` view a call cost 2.3 times as many instructions), and ``host(_:)``'s
    /// first eight bytes (`127.0.0.`) at once.
    public static func hostIndex(of address: String) -> Int? {
        var address = address
        return address.withUTF8 { hostIndex(of: $0) }
    }

    /// `127.0.0.` (bytes 31 32 37 2E 30 2E 30 2E) as one word, as ``hostIndex(of:)`` loads
    /// it from memory. A constant: a `static let` would cost a `swift_once` call each read.
    private static var loopbackPrefix: UInt64 { UInt64(littleEndian: 0x2E30_2E30_2E37_3231) }

    private static func hostIndex(of address: UnsafeBufferPointer<UInt8>) -> Int? {
        guard address.count > 8, let base = address.baseAddress,
              UnsafeRawPointer(base).loadUnaligned(as: UInt64.self) == loopbackPrefix
        else { return nil }
        // The last octet: one to three digits, then the end or a port.
        var octet = 0, digits = 0
        for byte in UnsafeBufferPointer(rebasing: address[8...]).prefix(while: { $0 != UInt8(ascii: ":") }) {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 3 else { return nil }
            octet = octet * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        guard digits > 0, octet >= 1 else { return nil }
        return octet - 1
    }

    /// The simulation's settings of a node named `name` at `host`: cluster `simulated`,
    /// port 7000, discovery on port 7001 every 50 ms.
    public static func settings(named name: String, host: String) -> ClusterSettings {
        var settings = ClusterSettings()
        settings.cluster = "simulated"
        settings.nodeName = name
        settings.host = host
        settings.port = 7000
        settings.discoveryPort = 7001
        settings.discoveryInterval = 0.05
        return settings
    }

    private static func runtime(
        _ clock: any RuntimeClock, _ network: SimulatedNetwork, host index: Int, seed: UInt64, disk: any Disk = RealDisk(), incarnations: IncarnationSequence
    ) -> Runtime {
        Runtime.virtual(clock, network: network.host(host(index)), disk: disk, seed: seed &* 1000 &+ UInt64(index), incarnations: incarnations)
    }

    /// A host of the network nobody has used yet, and the runtime of whoever lives there.
    public func newHost() -> (host: String, runtime: Runtime) {
        let index = hosts.add(1, ordering: .relaxed).oldValue
        return (Self.host(index), Self.runtime(clock, network, host: index, seed: seed, incarnations: incarnations))
    }

    /// Every host handed out so far.
    public var allHosts: [String] { (0..<hosts.load(ordering: .relaxed)).map(Self.host) }

    public subscript(index: Int) -> ClusterNode { nodes[index] }

    /// Every node started, with the cluster and later.
    public var allNodes: [ClusterNode] { nodes + added.withLock { $0.nodes } }

    /// Where the nodes' logs go: nowhere, or every line to stderr when the environment
    /// sets `SIMULATION_NODE_LOGS=1` (for reading a failing seed; the trace and its hash
    /// do not change).
    static let nodeLogger: Logger = ProcessInfo.processInfo.environment["SIMULATION_NODE_LOGS"] == "1"
        ? .lines(minimumLevel: .debug) { line in FileHandle.standardError.write(Data(line.utf8)) }
        : .discard

    /// A node named `name` on a host of its own, with the simulation's settings (then
    /// `configure`d), started; stopped by ``stop()``.
    public func startNode(
        named name: String, registry: TaskRegistry = TaskRegistry(), faults: ScanSystem.Faults = .init(),
        durability: (any TaskJobDurability)? = nil, configure: (inout ClusterSettings) -> Void = { _ in }
    ) throws -> ClusterNode {
        let (host, runtime) = newHost()
        var settings = Self.settings(named: name, host: host)
        configure(&settings)
        let node = try ClusterNode(settings: settings, registry: registry, faults: faults, logger: Self.nodeLogger, runtime: runtime)
        added.withLock { $0.nodes.append(node) }
        node.start()
        TaskJobs.host(on: node, durability: durability)
        return node
    }

    /// A new node at the host of node `index` (its old one stopped: a restart), with that
    /// node's settings (then `configure`d) and registry, on `disk` (by default the first
    /// incarnation's), not started; stopped by ``stop()``. Its runtime's seeds differ from
    /// every earlier incarnation's.
    public func restartNode(_ index: Int, disk: (any Disk)? = nil, configure: (inout ClusterSettings) -> Void = { _ in }) throws -> ClusterNode {
        var settings = nodes[index].settings
        configure(&settings)
        let restart = restarts.add(1, ordering: .relaxed).newValue
        let runtime = Runtime.virtual(
            nodeClocks[index], network: network.host(Self.host(index)), disk: disk ?? nodes[index].system.runtime.disk,
            seed: seed &* 1000 &+ UInt64(index) &+ UInt64(restart) &* 1_000_003, incarnations: incarnations)
        let node = try ClusterNode(settings: settings, registry: nodes[index].registry, logger: Self.nodeLogger, runtime: runtime)
        added.withLock { $0.nodes.append(node) }
        return node
    }

    /// An actor system (not a node: no discovery, heartbeats or membership) named `name`
    /// on a host of its own, with the simulation's settings (then `configure`d); a member
    /// unless `isMember` is false (a client). Shut down by ``stop()``.
    public func system(
        named name: String, isMember: Bool = true, configure: (inout ClusterSettings) -> Void = { _ in }
    ) throws -> ClusterSystem {
        let (host, runtime) = newHost()
        var settings = Self.settings(named: name, host: host)
        configure(&settings)
        let system = try ClusterSystem(settings: settings, isMember: isMember, runtime: runtime)
        added.withLock { $0.systems.append(system) }
        return system
    }

    /// A client's actor system (not a member) on a host of its own.
    public func client(named name: String = "client", configure: (inout ClusterSettings) -> Void = { _ in }) throws -> ClusterSystem {
        try system(named: name, isMember: false, configure: configure)
    }

    /// A ``ClusterClient`` on a host of its own, connected (in virtual time, at most 10 s)
    /// to `node`, or, when nil, to the first node its discovery hears; with the
    /// simulation's cluster, then `configure`d. Shut down by ``stop()``.
    public func clusterClient(
        to node: ClusterNode?, registry: TaskRegistry = TaskRegistry(), configure: (inout ClusterSettings) -> Void = { _ in }
    ) async throws -> ClusterClient {
        let (_, runtime) = newHost()
        var settings = Self.settings(named: "client", host: "")
        configure(&settings)
        let address = node?.system.address
        let fixed = settings
        let client = try await complete("the client connects", within: 10) {
            try await ClusterClient.connect(to: address, settings: fixed, registry: registry, runtime: runtime)
        }
        added.withLock { $0.systems.append(client.system) }
        return client
    }

    /// Keeps `actor` alive until the test ends, and returns it.
    @discardableResult
    public func keep<Act: DistributedActor>(_ actor: Act) -> Act {
        kept.withLock { $0.append(actor) }
        return actor
    }

    /// Cuts `host` off from every other host, both ways (``SimulatedNetwork/heal()`` ends it).
    public func isolate(_ host: String) {
        for other in allHosts where other != host { network.cut(between: host, and: other) }
    }

    /// Pauses node `index` (whichever incarnation runs at its host), as `SIGSTOP` does:
    /// its timers stop waking (``PausableClock``) and its host is cut off both ways, so
    /// what is sent to it waits (streams) or is lost (datagrams, and a connect fails at
    /// once: simpler than a kernel's backlog) and it sends nothing. Time moves on for
    /// the others. ``resume(_:)`` ends it.
    public func pause(_ index: Int) {
        nodeClocks[index].pause()
        isolate(Self.host(index))
    }

    /// Resumes node `index` after ``pause(_:)``: its links heal (every cut of the network
    /// heals: ``SimulatedNetwork/heal()``), what waited for it arrives, and every timer
    /// that came due during the pause fires at once.
    public func resume(_ index: Int) {
        network.heal()
        nodeClocks[index].resume()
    }

    /// Moves virtual time until `condition` holds, at most `seconds` of virtual time;
    /// throws ``VirtualTimeout`` naming `what` otherwise. Time moves to the next
    /// sleeper's deadline on the clock, in steps of at least `step` seconds, and the
    /// condition is checked after each.
    public func run(
        until what: @autoclosure () -> String, within seconds: Double, step: Double = 0.005, _ condition: () async throws -> Bool
    ) async throws {
        let deadline = clock.now + seconds
        while true {
            try await settle()
            if try await condition() { return }
            let now = clock.now
            guard now < deadline else { throw VirtualTimeout(what: what(), seconds: seconds) }
            // Nothing happens between two deadlines of sleepers on a quiet network: go
            // straight to the next one (at least `step`, at most to the end of the wait).
            let next = clock.nextDeadline ?? deadline
            clock.advance(by: max(step, min(next, deadline) - now))
        }
    }

    /// Moves virtual time `seconds` forward in steps, letting every node do what falls due.
    public func run(for seconds: Double, step: Double = 0.005) async throws {
        let end = clock.now + seconds
        try await run(until: "", within: seconds + step, step: step) { clock.now >= end - step / 2 }
    }

    /// Moves virtual time for `seconds`, checking `condition` at every step; throws
    /// ``VirtualTimeout`` (with `broke`) at the first step where it is false. For what
    /// must not happen.
    public func holds(_ what: @autoclosure () -> String, for seconds: Double, step: Double = 0.005, _ condition: () async throws -> Bool) async throws {
        let end = clock.now + seconds
        var broke = false
        try await run(until: what(), within: seconds + step, step: step) {
            guard try await condition() else {
                broke = true
                return true
            }
            return clock.now >= end - step / 2
        }
        if broke { throw VirtualTimeout(what: what(), seconds: seconds, broke: true) }
    }

    /// Runs `operation` on a task of its own and moves virtual time until it ends (at most
    /// `seconds` of virtual time; then the task is cancelled and ``VirtualTimeout``
    /// naming `what` is thrown); returns what it returned, throws what it threw. How a
    /// test awaits a call, a join or a map while the nodes' timers run.
    @discardableResult
    public func complete<Value: Sendable>(
        _ what: @autoclosure () -> String, within seconds: Double, step: Double = 0.005, _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let ended = Atomic<Bool>(false)
        let task = Task {
            defer { ended.store(true, ordering: .releasing) }
            return try await operation()
        }
        do {
            try await run(until: what(), within: seconds, step: step) { ended.load(ordering: .acquiring) }
        } catch {
            task.cancel()
            throw error
        }
        return try await task.value
    }

    /// Returns once every task the last step of time woke has run and waits again (on the
    /// clock or for a message): no job of the process is ready
    /// (``SimulationExecutor/untilIdle()``), so time may move. Throws ``OutsideSimulation``
    /// when the caller is not a task of the drain that runs now, and ``VirtualTimeout``
    /// when jobs ran ``SimulationExecutor/patience`` times without a pause (a node that
    /// never waits, a failure of its own).
    public func settle() async throws {
        guard SimulationExecutor.isCurrent else { throw OutsideSimulation() }
        guard await SimulationExecutor.untilIdle() else {
            throw VirtualTimeout(what: "the simulated cluster to go quiet (\(SimulationExecutor.patience) jobs ran without a pause)", seconds: clock.now)
        }
        if let wait = SimulationExecutor.takeRealTimeWait() { throw RealTimeInSimulation(wait: wait) }
    }

    /// Waits until every node started with the cluster sees every other one alive (at
    /// most 10 virtual seconds).
    public func awaitMesh() async throws {
        let others = nodes.count - 1
        try await run(until: "every node sees the \(others) others alive", within: 10) {
            nodes.allSatisfy { node in node.members.count { $0.state == .alive } >= others }
        }
    }

    /// Stops every node, and shuts down every system and client made here (a node's
    /// goodbyes are not awaited).
    public func stop() {
        let (later, systems) = added.withLock { $0 }
        for node in nodes + later { node.stop() }
        for system in systems { system.shutdown() }
        kept.withLock { $0.removeAll() }
    }

    /// Leaps node `index`'s own clock (whichever incarnation runs at its host) `seconds`
    /// forward and its wall clock by `wallBy` (``PausableClock/jump(by:wallBy:)``): its
    /// timers due by then fire at once; the others' clocks stay where they are.
    @discardableResult
    public func jumpClock(of index: Int, by seconds: Double, wallBy: Double? = nil) -> Int {
        nodeClocks[index].jump(by: seconds, wallBy: wallBy)
    }

    /// Steps node `index`'s wall clock back in line (``PausableClock/resetWallClock()``).
    public func resetWallClock(of index: Int) {
        nodeClocks[index].resetWallClock()
    }
}

/// A ``SimulatedCluster`` made or driven outside a drain of ``SimulationExecutor``, where
/// nobody knows when its nodes are quiet.
public struct OutsideSimulation: Error, CustomStringConvertible {
    public var description: String {
        "a SimulatedCluster runs only inside SimulationExecutor, where settle() is exact: in a test, "
            + "mark the suite or test `.simulated` (SpokesTestKit); in a program, drive it inside SimulationExecutor.run"
    }
}

/// A task of the simulation waited on the machine's clock (``RealClock``) instead of its
/// node's runtime: a shell that reads its time from outside the seam, which virtual time
/// cannot drive.
public struct RealTimeInSimulation: Error, CustomStringConvertible {
    /// What waited, in words.
    public let wait: String

    public init(wait: String) { self.wait = wait }

    public var description: String {
        "\(wait) inside the simulation: pass the node's runtime clock (`system.runtime.clock`) to whatever waits"
    }
}
