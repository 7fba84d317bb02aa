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
    /// A node of `other`'s cluster named `name`, running the probe and `kinds`.
    func startNode(like other: ClusterNode, named name: String, kinds: [any TaskKind]) throws -> ClusterNode {
        try TestCluster(nodes: [other]).startNode(named: name, registry: TaskRegistry(kinds: [ProbeTask(gauge: gauge)] + kinds))
    }

    @Test func tasksOfAKindGoOnlyToTheNodesThatRunItAtTheSubmittersVersion() async throws {
        let nodes = try await startCluster(1)
        let runsIt = try startNode(like: nodes[0], named: "runs-it", kinds: [WhereTask()])
        let other = try startNode(like: nodes[0], named: "other-version", kinds: [WhereTaskVersion2()])
        defer { (nodes + [runsIt, other]).forEach { $0.stop() } }
        try await waitUntil("w0 sees both others alive") { nodes[0].members.count { $0.state == .alive } == 2 }

        // w0 (the coordinator) does not run the kind; other-version runs another version.
        let (systems, following, placement) = try await nodes[0].makeSystems(for: WhereTask.name, schema: WhereTask.schema)
        defer { following.cancel() }
        #expect(placement.nodes == ["runs-it"])
        #expect(await systems.nodes == ["runs-it"], "neither the coordinator nor the other version is offered")
        let runner = JobRunner(systems: systems, job: "kinds", kind: WhereTask.name, deadline: 10, retries: 0)
        let outcomes = await runner.run(count: 12, input: { _, _ in "0" })
        #expect(outcomes.allSatisfy { $0.output == "\"runs-it\"" }, "\(outcomes.map { ($0.output, $0.failures) })")
    }

    @Test func aJobOfAKindNoAliveNodeRunsFailsAtOnceNamingTheNodesAsked() async throws {
        let nodes = try await startCluster(2)
        defer { nodes.forEach { $0.stop() } }
        try await waitUntil("w0 sees w1 alive") { nodes[0].members.count { $0.state == .alive } == 1 }
        do {
            _ = try await nodes[0].makeSystems(for: "test.nobody-runs-this")
            Issue.record("a kind no node runs got systems")
        } catch let error as NoNodeRunsKind {
            #expect(error.kind == "test.nobody-runs-this")
            #expect(error.asked == ["w0", "w1"])
        }
    }

    @Test func aMemberThatJoinsLaterIsOfferedOnlyWhenItRunsTheKind() async throws {
        let nodes = try await startCluster(1, kinds: [WhereTask()])
        defer { nodes.forEach { $0.stop() } }
        let (systems, following, _) = try await nodes[0].makeSystems(for: WhereTask.name)
        defer { following.cancel() }
        let without = try startNode(like: nodes[0], named: "without", kinds: [])
        let with = try startNode(like: nodes[0], named: "with", kinds: [WhereTask()])
        defer { [without, with].forEach { $0.stop() } }
        try await waitUntil("the member running the kind is offered") { await systems.nodes.contains("with") }
        // The answer is awaited (a member just found may not be connected yet, and a call
        // that misses its bound answers nil), then checked.
        try await waitUntil("w0 learnt what the other member runs") {
            guard let asked = nodes[0].members.first(where: { $0.node.name == "without" }) else { return false }
            return await nodes[0].kinds(of: asked) != nil
        }
        let asked = try #require(nodes[0].members.first { $0.node.name == "without" })
        #expect(await nodes[0].kinds(of: asked)?.contains(WhereTask.schema) == false, "known now, from the answer kept")
        #expect(await systems.nodes.contains("without") == false)
    }
}

extension SchedulingTests {
    /// Issue 21 §2: a call whose connection is gone is cancelled on the worker, so its
    /// slot frees at once, not when the task would have ended (30 s here).
    @Test func aTaskWhoseCallersConnectionIsLostFreesItsSlotAtOnce() async throws {
        let nodes = try await startCluster(1, slots: 1)
        defer { nodes.forEach { $0.stop() } }
        var settings = nodes[0].settings
        settings.port = 0
        let client = try ClusterSystem(settings: settings, isMember: false)
        let peer = try await client.join(nodes[0].system.address)
        let worker = try ScanSystem.resolve(id: ActorID(node: peer.node, name: ScanSystem.wellKnownName), using: client)
        let call = Task { try await worker.run(probe("lost", 0, seconds: 30)) }
        try await waitUntil("the task holds the node's only slot") { nodes[0].counters.inUse.cpu == 1 }
        client.shutdown()
        try await eventually("the slot is free", within: 3) { nodes[0].counters.inUse.cpu == 0 }
        _ = try? await call.value
    }
}
