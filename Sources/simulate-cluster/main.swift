import Foundation
import SpokesCluster
import SpokesConcurrency
import SpokesSimulation

// Runs the cluster in the deterministic simulator, one run per seed (Docs/simulator.md).
//
//   simulate-cluster [--model nodes] --nodes N --seeds A-B   N whole nodes as `spokes node`
//                                              assembles them, real clients, crashes and
//                                              restarts, partitions and loss, in virtual
//                                              time, every task on one thread (issue 28 §2;
//                                              --twice plays each seed again and compares;
//                                              --scenario bike-failover|twin-name|upgrade)
//   simulate-cluster --model raft --nodes N --seeds A-B ...         one Raft group of N
//                                              replicas, each under the node's RaftDriver
//   simulate-cluster --model raft-changes --nodes N ...  the same, its replicas changed one
//                                              at a time while it runs, with a spare
//
// Prints each seed's verdict and trace hash (the same seed gives the same hash), then a
// summary; a failing seed prints its shrunk trace, and the exit status is 1. Usage
// errors exit 2 naming the flag.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("simulate-cluster: \(message)\n".utf8))
    exit(2)
}

/// What the flags ask for.
struct Request {
    var nodes = 5
    var seeds: ClosedRange<UInt64> = 1...100
    var kinds = SimulationFault.Kind.allCases
    var json = false
    /// `nodes` (N whole nodes), `raft` or `raft-changes` (one Raft group).
    var model = "nodes"
    /// Whether `--faults` was given.
    var faultsChosen = false
    /// `--twice` (`--model nodes`): play each seed twice and fail one whose runs differ.
    var twice = false
    /// `--faults` as given, checked against the model's kinds once the model is known.
    var faultNames: [String] = []
    /// `--drop` (`--model nodes`): faults of each seed's plan left out (by number), as a
    /// failing seed's shrunk replay names them.
    var dropped: Set<Int> = []
    /// `--scenario` (`--model nodes`): `mixed` (maps, a cancel, a bike job, every kind of
    /// fault), `bike-failover` (bike jobs whose coordinators the faults hit), `twin-name`
    /// (the mixed run with a second process started under a running node's name) or
    /// `upgrade` (a node of the release before, upgraded when it restarts).
    var scenario = "mixed"
}

func parse(_ given: [String]) -> Request {
    var request = Request()
    var arguments = given
    while !arguments.isEmpty {
        let flag = arguments.removeFirst()
        func value() -> String {
            guard !arguments.isEmpty else { fail("\(flag) needs a value") }
            return arguments.removeFirst()
        }
        switch flag {
        case "--twice":
            request.twice = true
        case "--nodes":
            let text = value()
            guard let count = Int(text), (1...200).contains(count) else { fail("--nodes expects 1 to 200, got '\(text)'") }
            request.nodes = count
        case "--seeds":
            let text = value()
            let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { UInt64($0) }
            if parts.count == 1, let seed = parts[0] {
                request.seeds = seed...seed
            } else if parts.count == 2, let first = parts[0], let last = parts[1], first <= last, last - first < 1_000_000 {
                request.seeds = first...last
            } else {
                fail("--seeds expects A or A-B (A <= B, at most 1,000,000 seeds), got '\(text)'")
            }
        case "--faults":
            // Checked once the model is known: `--model nodes` has kinds of its own.
            request.faultNames = value().split(separator: ",").map(String.init)
            if request.faultNames.isEmpty { fail("--faults needs at least one kind") }
            request.faultsChosen = true
        case "--scenario":
            let text = value()
            guard ["mixed", "bike-failover", "twin-name", "upgrade"].contains(text) else {
                fail("--scenario expects mixed, bike-failover, twin-name or upgrade, got '\(text)'")
            }
            request.scenario = text
        case "--drop":
            let text = value()
            let indices = text.split(separator: ",").map { Int($0) }
            guard !indices.isEmpty, indices.allSatisfy({ $0 != nil && $0! >= 0 && $0! < 100 }) else {
                fail("--drop expects fault numbers of the seed's plan, 0 to 99, separated by commas, got '\(text)'")
            }
            request.dropped = Set(indices.map { $0! })
        case "--json":
            request.json = true
        case "--model":
            let text = value()
            guard ["raft", "raft-changes", "nodes"].contains(text) else {
                fail("--model expects nodes, raft or raft-changes, got '\(text)' (the membership, scheduling, bikes and bike-failover models were replaced by the nodes model's invariants)")
            }
            request.model = text
        case "-h", "--help":
            print("usage: simulate-cluster [--model nodes|raft|raft-changes] --nodes N --seeds A-B [--faults KIND,...] [--json (raft)] [--scenario mixed|bike-failover|twin-name|upgrade, --twice, --drop I,J (nodes)]")
            exit(0)
        default:
            fail("unknown flag \(flag)")
        }
    }
    return request
    }

    var request = parse(Array(CommandLine.arguments.dropFirst()))
    if request.twice, request.model != "nodes" { fail("--twice is for --model nodes (the other models' kernel is deterministic by construction)") }
    if request.scenario != "mixed", request.model != "nodes" { fail("--scenario is for --model nodes") }
    if !request.dropped.isEmpty, request.model != "nodes" { fail("--drop is for --model nodes (the other models shrink a failing seed themselves)") }
    if request.model != "nodes", request.faultsChosen {
        request.kinds = request.faultNames.map { name in
            guard let kind = SimulationFault.Kind(rawValue: name) else {
                fail("--faults: '\(name)' is not one of \(SimulationFault.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return kind
        }
    }
    let nodes = request.nodes, seeds = request.seeds, kinds = request.kinds, json = request.json

/// Plays every seed of `request` with `model`, prints each verdict and the summary; the exit
/// status.
func play<Model: SimulationModel>(
    _ model: @escaping () -> Model, name: String, settle: Double, kinds: [SimulationFault.Kind] = kinds, faultCount: ClosedRange<Int> = 1...6
) -> Int32 {
    func options(_ seed: UInt64) -> SimulationOptions { SimulationOptions(seed: seed, faultWindow: 10, faultCount: faultCount, faultKinds: kinds, settle: settle) }
    let start = RealClock().now
    var failures: [UInt64] = []
    var virtual = 0.0
    var runs: [[String: Any]] = []
    for seed in seeds {
        let (result, _) = Simulation.play(model(), options: options(seed))
        virtual += result.virtualSeconds
        let hash = String(result.traceHash, radix: 16)
        runs.append(["seed": seed, "failed": result.failed, "traceHash": hash, "events": result.events, "virtualSeconds": result.virtualSeconds])
        if !json { print("seed \(seed): \(result.failed ? "FAIL" : "ok") trace \(hash) (\(result.events) events)") }
        if result.failed {
            failures.append(seed)
            let shrunk = Simulation.shrink(result, model: model, options: options(seed))
            FileHandle.standardError.write(Data((Simulation<Model>.report(shrunk, lines: Int(ProcessInfo.processInfo.environment["SIMULATION_TRACE_LINES"] ?? "") ?? 80) + "\n").utf8))
        }
    }
    let wall = RealClock().now - start
    if json {
        let summary: [String: Any] = ["model": name, "nodes": nodes, "seeds": seeds.count, "failures": failures, "virtualSeconds": virtual, "wallSeconds": wall, "runs": runs]
        let data = (try? JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys])) ?? Data("{}".utf8)
        print(String(decoding: data, as: UTF8.self))
    } else {
        print(String(format: "%@: %d nodes, %d seeds, %d failed; %.0f virtual s in %.2f s wall (%.0fx real time)", name, nodes, seeds.count, failures.count, virtual, wall, virtual / max(wall, 1e-9)))
    }
    return failures.isEmpty ? 0 : 1
}

switch request.model {
case "nodes":
    // Whole nodes: not the kernel's single-threaded models; faults of its own (crash,
    // partition, one-way, pause, replica-cut, loss), and no --json yet.
    if json { fail("--model nodes prints text only: drop --json") }
    var options = switch request.scenario {
    case "bike-failover": NodesModel.Options.bikeFailover(nodes: nodes)
    case "twin-name": NodesModel.Options.twinName(nodes: nodes)
    case "upgrade": NodesModel.Options.upgrade(nodes: nodes)
    default: NodesModel.Options(nodes: nodes)
    }
    if request.scenario == "twin-name", nodes < 2 { fail("--scenario twin-name needs --nodes 2 or more") }
    if request.faultsChosen {
        options.faultKinds = request.faultNames.map { name in
            guard let kind = NodesModel.Fault.Kind(rawValue: name) else {
                fail("--faults: '\(name)' is not one of --model nodes' kinds: \(NodesModel.Fault.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return kind
        }
    }
    options.droppedFaults = request.dropped
    let traceLines = Int(ProcessInfo.processInfo.environment["SIMULATION_TRACE_LINES"] ?? "") ?? 80
    // SIMULATION_TRACE_ALL=1: every seed's trace on stderr, not only a failing one's.
    let showEveryTrace = ProcessInfo.processInfo.environment["SIMULATION_TRACE_ALL"] == "1"
    let failures = NodesModel.playAllBlocking(seeds: seeds, options: options, scenario: request.scenario == "mixed" ? nil : request.scenario, traceLines: traceLines, showEveryTrace: showEveryTrace, twice: request.twice, print: { print($0) }) {
        FileHandle.standardError.write(Data(($0 + "\n").utf8))
    }
    exit(failures.isEmpty ? 0 : 1)
case "raft":
    // One Raft group of `nodes` replicas (1, 2, 3 or 5) under the node's own `RaftDriver`;
    // as `RaftSimulationTests` plays it.
    exit(play({ RaftClusterModel(options: RaftClusterModel.Options(replicas: nodes)) }, name: "raft", settle: 8))
case "raft-changes":
    // The same group while its replicas change, one at a time, with a spare (issue 29 §2).
    var changing = RaftClusterModel.Options(replicas: nodes)
    changing.changeReplicas = true
    let options = changing
    exit(play({ RaftClusterModel(options: options) }, name: "raft-changes", settle: 8))
default:
    fail("unknown model \(request.model)")
}
