import Foundation
import SpokesSimulation

// Runs the cluster's membership in the deterministic simulator (issue 18 §2): N nodes'
// real Membership state machines over a faulty virtual network, one run per seed.
//
//   simulate-cluster --nodes N --seeds A-B [--faults crash,pause,...] [--json]
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
            let text = value()
            request.kinds = text.split(separator: ",").map { name in
                guard let kind = SimulationFault.Kind(rawValue: String(name)) else {
                    fail("--faults: '\(name)' is not one of \(SimulationFault.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return kind
            }
            if request.kinds.isEmpty { fail("--faults needs at least one kind") }
        case "--json":
            request.json = true
        case "-h", "--help":
            print("usage: simulate-cluster --nodes N --seeds A-B [--faults \(SimulationFault.Kind.allCases.map(\.rawValue).joined(separator: ","))] [--json]")
            exit(0)
        default:
            fail("unknown flag \(flag)")
        }
    }
    return request
    }

    let request = parse(Array(CommandLine.arguments.dropFirst()))
    let nodes = request.nodes, seeds = request.seeds, kinds = request.kinds, json = request.json

    func model() -> MembershipModel { MembershipModel(options: MembershipModel.Options(nodes: nodes)) }
    func options(_ seed: UInt64) -> SimulationOptions { SimulationOptions(seed: seed, faultWindow: 10, faultKinds: kinds, settle: 6) }

    let start = Date()
    var failures: [UInt64] = []
    var virtual = 0.0
    var runs: [[String: Any]] = []
    for seed in seeds {
        let result = Simulation.run(model(), options: options(seed))
        virtual += result.virtualSeconds
        let hash = String(result.traceHash, radix: 16)
        runs.append(["seed": seed, "failed": result.failed, "traceHash": hash, "events": result.events, "virtualSeconds": result.virtualSeconds])
        if !json { print("seed \(seed): \(result.failed ? "FAIL" : "ok") trace \(hash) (\(result.events) events)") }
        if result.failed {
            failures.append(seed)
            let shrunk = Simulation.shrink(result, model: model, options: options(seed))
            FileHandle.standardError.write(Data((Simulation<MembershipModel>.report(shrunk, lines: 80) + "\n").utf8))
        }
    }
    let wall = Date().timeIntervalSince(start)
    if json {
        let summary: [String: Any] = ["nodes": nodes, "seeds": seeds.count, "failures": failures, "virtualSeconds": virtual, "wallSeconds": wall, "runs": runs]
        let data = (try? JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys])) ?? Data("{}".utf8)
        print(String(decoding: data, as: UTF8.self))
    } else {
        print(String(format: "%d nodes, %d seeds, %d failed; %.0f virtual s in %.2f s wall (%.0fx real time)", nodes, seeds.count, failures.count, virtual, wall, virtual / max(wall, 1e-9)))
    }
    exit(failures.isEmpty ? 0 : 1)
