import SpokesClusterTestKit
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// `test.where`: answers the name of the node it ran on.
struct WhereTask: TaskKind {
    static let name = "test.where"
    func run(_ input: Int, context: TaskContext) async throws -> String { context.system.node.name }
}

/// `test.where` at another version: a build whose kind changed.
struct WhereTaskVersion2: TaskKind {
    static let name = "test.where"
    static let version = "2"
    func run(_ input: Int, context: TaskContext) async throws -> String { "v2" }
}

extension SchedulingTests {
    /// A node named `name` joining `cluster`, running the probe and `kinds`.
    func startNode(in cluster: SimulatedCluster, named name: String, kinds: [any TaskKind]) throws -> ClusterNode {
        try cluster.startNode(named: name, registry: TaskRegistry(kinds: [ProbeTask(gauge: gauge)] + kinds))
    }

    @Test func tasksOfAKindGoOnlyToTheNodesThatRunItAtTheSubmittersVersion() async throws {
        let cluster = try startCluster(1)
        defer { cluster.stop() }
        let w0 = cluster[0]
        _ = try startNode(in: cluster, named: "runs-it", kinds: [WhereTask()])
        _ = try startNode(in: cluster, named: "other-version", kinds: [WhereTaskVersion2()])
        try await cluster.run(until: "w0 sees both others alive", within: 5) { w0.members.count { $0.state == .alive } == 2 }

        // w0 (the coordinator) does not run the kind; other-version runs another version.
        let (systems, following, placement) = try await cluster.complete("the placement", within: 5) {
            try await w0.makeSystems(for: WhereTask.name, schema: WhereTask.schema)
        }
        defer { following.cancel() }
        #expect(placement.nodes == ["runs-it"])
        #expect(await systems.nodes == ["runs-it"], "neither the coordinator nor the other version is offered")
        let runner = JobRunner(systems: systems, job: "kinds", kind: WhereTask.name, deadline: Self.noDeadline, retries: 0)
        let outcomes = try await run(runner, count: 12, in: cluster, input: { _, _ in "0" })
        #expect(outcomes.allSatisfy { $0.output == "\"runs-it\"" }, "\(outcomes.map { ($0.output, $0.failures) })")
    }

    @Test func aJobOfAKindNoAliveNodeRunsFailsAtOnceNamingTheNodesAsked() async throws {
        let cluster = try startCluster(2)
        defer { cluster.stop() }
        let w0 = cluster[0]
        try await cluster.run(until: "w0 sees w1 alive", within: 5) { w0.members.count { $0.state == .alive } == 1 }
        let start = cluster.clock.now
        do {
            _ = try await cluster.complete("the placement", within: 5) { try await w0.makeSystems(for: "test.nobody-runs-this") }
            Issue.record("a kind no node runs got systems")
        } catch let error as NoNodeRunsKind {
            #expect(error.kind == "test.nobody-runs-this")
            #expect(error.asked == ["w0", "w1"])
        }
        #expect(cluster.clock.now - start < w0.settings.heartbeatInterval, "at once: \(cluster.clock.now - start) virtual s")
    }

    @Test func aMemberThatJoinsLaterIsOfferedOnlyWhenItRunsTheKind() async throws {
        let cluster = try startCluster(1, kinds: [WhereTask()])
        defer { cluster.stop() }
        let w0 = cluster[0]
        let (systems, following, _) = try await cluster.complete("the placement", within: 5) { try await w0.makeSystems(for: WhereTask.name) }
        defer { following.cancel() }
        _ = try startNode(in: cluster, named: "without", kinds: [])
        _ = try startNode(in: cluster, named: "with", kinds: [WhereTask()])
        try await cluster.run(until: "the member running the kind is offered", within: 5) { await systems.nodes.contains("with") }
        // The answer is awaited (a member just found may not be connected yet, and a call
        // that misses its bound answers nil), then checked.
        try await cluster.run(until: "w0 learnt what the other member runs", within: 5) {
            guard let asked = w0.members.first(where: { $0.node.name == "without" }) else { return false }
            return await w0.kinds(of: asked) != nil
        }
        let asked = try #require(w0.members.first { $0.node.name == "without" })
        #expect(await w0.kinds(of: asked)?.contains(WhereTask.schema) == false, "known now, from the answer kept")
        #expect(await systems.nodes.contains("without") == false)
    }
}

extension SchedulingTests {
    /// Issue 21 §2: a call whose connection is gone is cancelled on the worker, so its
    /// slot frees at once, not when the task would have ended (30 s here).
    @Test func aTaskWhoseCallersConnectionIsLostFreesItsSlotAtOnce() async throws {
        let cluster = try startCluster(1, slots: 1)
        defer { cluster.stop() }
        let node = cluster[0]
        let client = try cluster.client()
        let address = node.system.address
        let peer = try await cluster.complete("the client joins", within: 5) { try await client.join(address) }
        let worker = try ScanSystem.resolve(id: ActorID(node: peer.node, name: ScanSystem.wellKnownName), using: client)
        let call = Task { try await worker.run(Self.probe("lost", 0, seconds: 30)) }
        try await cluster.run(until: "the task holds the node's only slot", within: 1) { node.counters.inUse.cpu == 1 }
        let lost = cluster.clock.now
        client.shutdown()
        try await cluster.run(until: "the slot is free", within: 3) { node.counters.inUse.cpu == 0 }
        #expect(cluster.clock.now - lost < node.settings.heartbeatInterval, "at once, not when the task would end: \(cluster.clock.now - lost) virtual s")
        _ = try? await cluster.complete("the lost call ends", within: 1) { try await call.value }
    }
}
