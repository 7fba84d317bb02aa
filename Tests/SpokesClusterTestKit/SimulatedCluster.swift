import Foundation
import SpokesCluster
import SpokesConcurrency
import SpokesTestKit

/// Nodes that ship, in the test's process, on one ``SimulatedNetwork`` and one
/// ``VirtualClock``: node `i` is host `127.0.0.(i+1)` of the network. Time moves only in
/// ``run(until:within:step:_:)``, so a test of heartbeats, deaths and deadlines waits for
/// no real time and asserts no wall-clock bound.
///
/// How time moves: a step of virtual time is taken only once the network is quiet
/// (nothing sent and not yet read) and the number of sleepers on the clock has stayed
/// the same for several turns of the cooperative pool: the tasks the last step woke have
/// run and gone back to sleep. (Tasks run on the real pool, so this is quiet as observed,
/// not a proof: a node that computes for long between two awaits could be overtaken.)
public final class SimulatedCluster: Sendable {
    public let clock = VirtualClock()
    public let network: SimulatedNetwork
    /// The started nodes, named `prefix` + index.
    public let nodes: [ClusterNode]

    /// Starts `count` nodes named `prefix0`, `prefix1`, ...; `configure` adjusts node
    /// `index`'s settings after the simulation's own (its host, port 7000, discovery on
    /// port 7001 every 50 ms). `seed` draws the network's losses and the nodes' seeds.
    public init(
        _ count: Int, prefix: String = "n", seed: UInt64 = 1, configure: (Int, inout ClusterSettings) -> Void = { _, _ in },
        registry: (Int) -> TaskRegistry = { _ in TaskRegistry() }
    ) throws {
        let clock = clock
        let network = SimulatedNetwork(clock: clock, seed: seed)
        self.network = network
        nodes = try (0..<count).map { index in
            var settings = ClusterSettings()
            settings.cluster = "simulated"
            settings.nodeName = "\(prefix)\(index)"
            settings.host = Self.host(index)
            settings.port = 7000
            settings.discoveryPort = 7001
            settings.discoveryInterval = 0.05
            configure(index, &settings)
            let runtime = Runtime.virtual(clock, network: network.host(Self.host(index)), seed: seed &* 1000 &+ UInt64(index))
            let node = try ClusterNode(settings: settings, registry: registry(index), runtime: runtime)
            node.start()
            return node
        }
    }

    /// The network address of node `index`.
    public static func host(_ index: Int) -> String { "127.0.0.\(index + 1)" }

    public subscript(index: Int) -> ClusterNode { nodes[index] }

    /// Moves virtual time in steps of `step` seconds until `condition` holds, at most
    /// `seconds` of virtual time; throws ``EventuallyTimeout`` naming `what` otherwise.
    public func run(
        until what: @autoclosure () -> String, within seconds: Double, step: Double = 0.005, _ condition: () async throws -> Bool
    ) async throws {
        let deadline = clock.now + seconds
        while true {
            try await settle()
            if try await condition() { return }
            guard clock.now < deadline else { throw EventuallyTimeout(what: what(), seconds: seconds) }
            clock.advance(by: step)
        }
    }

    /// Moves virtual time `seconds` forward in steps, letting every node do what falls due.
    public func run(for seconds: Double, step: Double = 0.005) async throws {
        let end = clock.now + seconds
        try await run(until: "", within: seconds + step, step: step) { clock.now >= end - step / 2 }
    }

    /// Waits, turning the pool, until the network is quiet and the clock's sleepers have
    /// stayed the same for 20 turns. Bounded: 2 million turns (minutes of real time)
    /// mean a node never goes quiet, which is a failure of its own.
    private func settle() async throws {
        var quietTurns = 0
        var lastSleepers = -1
        for _ in 0..<2_000_000 {
            await Task.yield()
            let sleepers = clock.sleepers
            quietTurns = network.inFlight == 0 && sleepers == lastSleepers ? quietTurns + 1 : 0
            lastSleepers = sleepers
            if quietTurns >= 20 { return }
        }
        throw EventuallyTimeout(what: "the simulated cluster to go quiet (\(network.inFlight) on the network)", seconds: clock.now)
    }

    /// Waits until every node sees every other one alive (at most 10 virtual seconds).
    public func awaitMesh() async throws {
        let others = nodes.count - 1
        try await run(until: "every node sees the \(others) others alive", within: 10) {
            nodes.allSatisfy { node in node.members.count { $0.state == .alive } >= others }
        }
    }

    /// Stops every node.
    public func stop() {
        for node in nodes { node.stop() }
    }
}
