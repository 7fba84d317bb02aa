import Foundation
import SpokesCluster
import SpokesConcurrency
import SpokesSimulation

// Runs the cluster's membership in the deterministic simulator (issue 18 §2): N nodes'
// real Membership state machines over a faulty virtual network, one run per seed.
//
//   simulate-cluster --nodes N --seeds A-B [--faults crash,pause,...] [--json]
//   simulate-cluster --model scheduling --nodes N --seeds A-B ...   a coordinator placing a
//                                              job on N workers (Placement, WorkerAdmission)
//   simulate-cluster --model bikes --nodes N --seeds A-B ...        a bike job's ledger and
//                                              stations, its users walking on N workers
//   simulate-cluster --model bike-failover --nodes N --seeds A-B ... a replicated bike job's
//                                              Raft group of N failing over (issue 19)
//   simulate-cluster --model raft --nodes N --seeds A-B ...         one Raft group of N
//                                              replicas, each under the node's RaftDriver
//   simulate-cluster --model raft-changes --nodes N ...  the same, its replicas changed one
//                                              at a time while it runs, with a spare
//   simulate-cluster --model nodes --nodes N --seeds A-B   N whole nodes as `spokes node`
//                                              assembles them, real clients, crashes and
//                                              restarts, partitions and loss, in virtual
//                                              time, every task on one thread (issue 28 §2;
//                                              --twice plays each seed again and compares)
//   simulate-cluster --scale 10,25,50,100     the scale model (issue 18 §3): a table
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
    /// Cluster sizes for the scale model; empty: play seeds.
    var scale: [Int] = []
    /// `membership` (N members), `scheduling` (a coordinator placing a job on N workers),
    /// `bikes` (a bike job's ledger and stations, users on N workers), `bike-failover` (a
    /// replicated bike job's Raft group of N replicas, its leader coordinating),
    /// `raft` or `raft-changes` (one Raft group).
    var model = "membership"
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
    /// fault) or `bike-failover` (bike jobs whose coordinators the faults hit).
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
            guard ["mixed", "bike-failover"].contains(text) else { fail("--scenario expects mixed or bike-failover, got '\(text)'") }
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
            guard ["membership", "scheduling", "bikes", "bike-failover", "raft", "raft-changes", "nodes"].contains(text) else {
                fail("--model expects membership, scheduling, bikes, bike-failover, raft, raft-changes or nodes, got '\(text)'")
            }
            request.model = text
        case "--scale":
            let text = value()
            request.scale = text.split(separator: ",").compactMap { Int($0) }.filter { (2...500).contains($0) }
            if request.scale.isEmpty { fail("--scale expects sizes from 2 to 500, e.g. 10,25,50,100; got '\(text)'") }
        case "-h", "--help":
            print("usage: simulate-cluster [--model membership|scheduling|bikes|bike-failover|raft|raft-changes|nodes] --nodes N --seeds A-B [--faults \(SimulationFault.Kind.allCases.map(\.rawValue).joined(separator: ","))] [--json] [--scenario mixed|bike-failover, --twice, --drop I,J (nodes)]")
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

    if !request.scale.isEmpty {
    printScaleModel(request.scale)
    exit(0)
}

/// Plays every seed of `request` with `model`, prints each verdict and the summary; the exit
/// status. `scenarios` names what a run went through, counted over the seeds in a line
/// before the summary.
func play<Model: SimulationModel>(
    _ model: @escaping () -> Model, name: String, settle: Double, kinds: [SimulationFault.Kind] = kinds, faultCount: ClosedRange<Int> = 1...6,
    scenarios: ((Model, SimulationResult) -> [String])? = nil
) -> Int32 {
    func options(_ seed: UInt64) -> SimulationOptions { SimulationOptions(seed: seed, faultWindow: 10, faultCount: faultCount, faultKinds: kinds, settle: settle) }
    let start = RealClock().now
    var failures: [UInt64] = []
    var virtual = 0.0
    var runs: [[String: Any]] = []
    var seen: [String: Int] = [:]
    for seed in seeds {
        let (result, final) = Simulation.play(model(), options: options(seed))
        for scenario in scenarios?(final, result) ?? [] { seen[scenario, default: 0] += 1 }
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
        var summary: [String: Any] = ["model": name, "nodes": nodes, "seeds": seeds.count, "failures": failures, "virtualSeconds": virtual, "wallSeconds": wall, "runs": runs]
        if scenarios != nil { summary["scenarios"] = seen }
        let data = (try? JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys])) ?? Data("{}".utf8)
        print(String(decoding: data, as: UTF8.self))
    } else {
        if scenarios != nil {
            print("\(name) scenarios (seeds that had each): " + seen.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        print(String(format: "%@: %d nodes, %d seeds, %d failed; %.0f virtual s in %.2f s wall (%.0fx real time)", name, nodes, seeds.count, failures.count, virtual, wall, virtual / max(wall, 1e-9)))
    }
    return failures.isEmpty ? 0 : 1
}

switch request.model {
case "nodes":
    // Whole nodes: not the kernel's single-threaded models; faults of its own (crash,
    // partition, one-way, pause, replica-cut, loss), and no --json yet.
    if json { fail("--model nodes prints text only: drop --json") }
    var options = request.scenario == "bike-failover" ? NodesModel.Options.bikeFailover(nodes: nodes) : NodesModel.Options(nodes: nodes)
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
case "bike-failover":
    let failoverKinds = request.faultsChosen ? kinds : BikeFailoverModel.faultKinds
    let model = { BikeFailoverModel(options: BikeFailoverModel.Options(replicas: nodes)) }
    exit(play(model, name: "bike-failover", settle: model().options.livenessBound, kinds: failoverKinds, faultCount: BikeFailoverModel.faultCount) { model, result in
        model.scenarios(faults: result.faults)
    })
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
case "bikes":
    exit(play({ BikeJobModel(options: BikeJobModel.Options(workers: nodes)) }, name: "bikes", settle: 15))
case "scheduling":
    // Long enough after the faults for the job's last tasks to run again.
    exit(play({ SchedulingModel(options: SchedulingModel.Options(workers: nodes)) }, name: "scheduling", settle: 12))
default:
    exit(play({ MembershipModel(options: MembershipModel.Options(nodes: nodes)) }, name: "membership", settle: 6))
}


/// The scale model (issue 18 §3): today's full mesh at each size, from fixed scenarios of
/// one seed each, in virtual time. Heartbeats are what a member sends each tick to each
/// member; in the real system each is acknowledged, so the table counts both.
func printScaleModel(_ sizes: [Int]) {
    let sealed = FrameSeal.overhead + 4  // the ChaCha20-Poly1305 tag and the frame's length
    // A heartbeat's frame as `WireMessage` encodes it (`{"type", "body"}`), a sequence of seven digits.
    let heartbeat = #"{"type":"heartbeat","body":{"sequence":1000000}}"#.utf8.count
    print("| nodes | messages per node per s | bytes per node per s | crash: all suspect / all dead (s) | partition healed: all alive again (s) | false suspicions at 1% loss, per node per min |")
    print("|---|---|---|---|---|---|")
    for size in sizes {
        let model = MembershipModel(options: MembershipModel.Options(nodes: size))
        let quiet = SimulationOptions(seed: 1, faultCount: 0...0, settle: 10)
        // Steady state: 10 s after the mesh formed.
        let (_, steady) = Simulation.play(model, options: quiet, faults: [])
        let beats = steady.sent["heartbeat", default: 0]
        let seconds = 10.0
        let perNode = 2 * Double(beats) / Double(size) / seconds
        // A crash at 4 s that lasts past the run.
        let (_, crashed) = Simulation.play(model, options: SimulationOptions(seed: 1, settle: 2), faults: [SimulationFault(start: 4, duration: 6, effect: .crash(node: "m2"))])
        func last(_ state: Member.State) -> Double? {
            let times = crashed.verdicts.filter { $0.member == "m2" && $0.state == state && $0.time >= 4 }
            let observers = Set(times.map(\.observer))
            return observers.count == size - 1 ? times.map(\.time).max().map { $0 - 4 } : nil
        }
        // Half the nodes cut off both ways from 4 s to 8 s.
        let isolated = (1...max(1, size / 2)).map { "m\($0)" }
        let (_, split) = Simulation.play(model, options: SimulationOptions(seed: 1, settle: 6), faults: [SimulationFault(start: 4, duration: 4, effect: .partition(isolated: isolated, direction: .both))])
        let healed = split.convergedAt.map { $0 - 8 }
        // 1% of messages lost for 60 s, nothing else wrong.
        let (_, lossy) = Simulation.play(model, options: SimulationOptions(seed: 1, settle: 2), faults: [SimulationFault(start: 2, duration: 60, effect: .loss(rate: 0.01))])
        let suspicions = lossy.verdicts.filter { $0.state == .suspect }.count
        func text(_ value: Double?) -> String { value.map { String(format: "%.2f", $0) } ?? "never" }
        print("| \(size) | \(String(format: "%.0f", perNode)) | \(String(format: "%.0f", perNode * Double(heartbeat + sealed))) | \(text(last(.suspect))) / \(text(last(.dead))) | \(text(healed)) | \(String(format: "%.2f", Double(suspicions) / Double(size))) |")
    }
}
