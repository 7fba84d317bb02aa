import Foundation
import SpokesCluster
import SpokesConcurrency
import SpokesClusterTestKit
import SpokesTestKit
import Testing
@testable import SpokesBikes

@Suite(.processLane, .timeLimit(.minutes(2)))
struct SweepRunTaskTests {
    /// Six Milano stations: few enough that users compete, so seeds change the figures.
    static func contendedNetwork() throws -> Network {
        var network = try BundledNetworks.milano
        network.stations = Array(network.stations.prefix(6))
        return network
    }

    /// What `spokes simulate --workers 1` reports for `run`, as sweep figures.
    func simulated(_ run: SweepRun, on network: Network, includingResults: Bool = false) async throws -> SweepRunFigures {
        let report = try await Simulation(network: network, options: run.options).run()
        #expect(report.workers == 1)
        return SweepRunFigures(report, includingResults: includingResults)
    }

    func withoutWallTime(_ figures: SweepRunFigures) -> SweepRunFigures {
        var copy = figures
        copy.wallTime = 0
        return copy
    }

    @Test func aRunsFiguresAreThoseOfSimulateWithOneWorker() async throws {
        let plan = try SweepPlan(network: .bundled(name: .milano), lists: [.users: "200", .paths: "5", .seed: "1-3"])
        var seen: Set<SweepRunFigures> = []
        for index in 0..<plan.runCount {
            let figures = try await SweepRunTask().run(plan.taskInput(forRun: index))
            let expected = try await simulated(plan.run(at: index), on: plan.network)
            #expect(withoutWallTime(figures) == withoutWallTime(expected), "run \(index)")
            #expect(figures.results == nil, "no per-user results unless asked for")
            #expect(figures.conservation.holds)
            seen.insert(withoutWallTime(figures))
        }
        #expect(seen.count == 3, "each seed gives its own figures, so the comparison means something")
    }

    @Test func carriesPerUserResultsWhenAskedAndAGoalWhenGiven() async throws {
        let network = try Self.contendedNetwork()
        let goal = network.stations[2].id
        let plan = try SweepPlan(network: .inline(network: network), lists: [.users: "12", .paths: "6", .goal: goal, .seed: "9"], includeResults: true)
        let figures = try await SweepRunTask().run(plan.taskInput(forRun: 0))
        let expected = try await simulated(plan.run(at: 0), on: network, includingResults: true)
        #expect(withoutWallTime(figures) == withoutWallTime(expected))
        #expect(figures.results?.map(\.user) == Array(0..<12))
        #expect(figures.usersReachedGoal > 0, "the goal was used: \(figures)")
    }

    @Test func refusesInputsOutOfLimitsWithoutRunning() async throws {
        let run = SweepRun(setting: SweepSetting(users: 5, paths: 2), seed: 1)
        let refused: [SweepRunTask.Input] = [
            .init(network: .synthetic(stations: 10_000_000_000, bikes: 1, emptySlots: 1), run: run),
            .init(network: .synthetic(stations: 3, bikes: -1, emptySlots: 1), run: run),
            .init(network: .inline(network: Network(id: "x", name: "x", stations: [
                Station(id: "a", name: "a", freeBikes: .max, emptySlots: 0), Station(id: "b", name: "b", freeBikes: .max, emptySlots: 0),
            ])), run: run),
            .init(network: .inline(network: Network(id: "empty", name: "empty", stations: [])), run: run),
            .init(network: .bundled(name: .milano), run: SweepRun(setting: SweepSetting(users: 0, paths: 2), seed: 1)),
            .init(network: .bundled(name: .milano), run: SweepRun(setting: SweepSetting(users: 5_000_000, paths: 2), seed: 1)),
            .init(network: .bundled(name: .milano), run: SweepRun(setting: SweepSetting(users: 5, paths: 2, goal: "nowhere"), seed: 1)),
            .init(network: .bundled(name: .milano), run: SweepRun(setting: SweepSetting(users: 5, paths: 2, timeScale: .infinity), seed: 1)),
            .init(network: .bundled(name: .milano), run: SweepRun(setting: SweepSetting(users: 5, paths: 2, maxMoves: 0), seed: 1)),
            .init(network: .bundled(name: .milano), run: SweepRun(setting: SweepSetting(users: 5, paths: 2), seed: .max)),
        ]
        for input in refused {
            await #expect(throws: TaskError.self, "\(input)") { try await SweepRunTask().run(input) }
        }
        do {
            _ = try await SweepRunTask().run(refused[0])
        } catch {
            #expect("\(error)".hasPrefix("invalid input for bikes.sweep-run: a synthetic network of 10000000000 stations"), "\(error)")
        }
    }

    @Test func anUnknownBundledNetworkIsRefusedWhenDecoded() throws {
        let text = #"{"network":{"bundled":{"name":"atlantis"}},"run":{"users":1,"paths":1,"moveTime":0.1,"timeScale":0,"maxMoves":10,"seed":1},"includeResults":false}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(SweepRunTask.Input.self, from: Data(text.utf8)) }
    }

    /// The network travels as a name or three numbers unless it came from a file.
    @Test func bundledAndSyntheticInputsStaySmall() throws {
        let plan = try SweepPlan(network: .bundled(name: .milano), lists: [.users: "200", .seed: "1"])
        let bundled = try JSONEncoder().encode(plan.taskInput(forRun: 0))
        #expect(bundled.count < 200, "\(String(decoding: bundled, as: UTF8.self))")
        let synthetic = try JSONEncoder().encode(SweepRunTask.Input(network: .synthetic(stations: 50_000, bikes: 5, emptySlots: 5), run: plan.run(at: 0)))
        #expect(synthetic.count < 220)
        let inline = try JSONEncoder().encode(SweepRunTask.Input(network: .inline(network: plan.network), run: plan.run(at: 0)))
        #expect(inline.count > 20_000, "a file's network travels whole: \(inline.count) bytes")
        let decoded = try JSONDecoder().decode(SweepRunTask.Input.self, from: inline)
        #expect(decoded.network == .inline(network: plan.network))
    }

    // MARK: On a cluster

    func startCluster(_ count: Int) async throws -> [ClusterNode] {
        try TestCluster(count, prefix: "s", slots: 1, registry: { _ in TaskRegistry(kinds: BikeKinds.all) }).nodes
    }

    /// Runs spread over two nodes give the figures one process gives, and the report says
    /// which node ran each.
    @Test func aRunsFiguresAreTheSameOnEveryNode() async throws {
        let nodes = try await startCluster(2)
        defer { nodes.forEach { $0.stop() } }
        let (systems, following) = try nodes[0].makeSystems()
        defer { following.cancel() }
        try await withTimeout(seconds: 10) { try await systems.waitForSystems(atLeast: 2) }

        let network = try Self.contendedNetwork()
        let plan = try SweepPlan(network: .inline(network: network), lists: [.users: "10,20", .paths: "4", .seed: "1-4"])
        let runner = JobRunner(systems: systems, job: "sweep-test", kind: SweepRunTask.name, deadline: 30, retries: 1)
        let outcomes = await runner.run(count: plan.runCount) { task, _ in
            String(decoding: try JSONEncoder().encode(plan.taskInput(forRun: task)), as: UTF8.self)
        }
        var runs: [SweepReport.Run] = []
        for outcome in outcomes {
            let output = try #require(outcome.output, "run \(outcome.task): \(outcome.failures)")
            let figures = try JSONDecoder().decode(SweepRunFigures.self, from: Data(output.utf8))
            let expected = try await simulated(plan.run(at: outcome.task), on: network)
            #expect(withoutWallTime(figures) == withoutWallTime(expected), "run \(outcome.task) on \(outcome.node ?? "?")")
            runs.append(SweepReport.Run(run: plan.run(at: outcome.task), node: outcome.node, figures: figures))
        }
        let report = SweepReport(network: network, runs: runs)
        #expect(Set(report.runsPerNode.keys) == ["s0", "s1"], "\(report.runsPerNode)")
        #expect(report.runsPerNode.values.reduce(0, +) == 8)
        #expect(report.groups.map(\.runs) == [4, 4])
    }
}
