import Foundation
import MonteCarloPi
import SpokesCluster
import SpokesJobs

// Estimates pi on a Spokes cluster from Swift code: maps pi.sample over seeded inputs
// with ClusterClient and sums the outputs.
//
//   pi-estimate [HOST:PORT] [--tasks N] [--samples S]
//
// Without an address it finds a node by discovery (cluster and discovery port from
// SPOKES_CLUSTER and SPOKES_DISCOVERY_PORT, as the CLI reads them; the secret from
// SPOKES_SECRET). Progress goes to stderr, the estimate to stdout.

func value(after flag: String, default fallback: Int) -> Int {
    guard let index = CommandLine.arguments.firstIndex(of: flag) else { return fallback }
    guard index + 1 < CommandLine.arguments.count, let number = Int(CommandLine.arguments[index + 1]), number > 0 else {
        FileHandle.standardError.write(Data("pi-estimate: \(flag) expects a positive integer\n".utf8))
        exit(2)
    }
    return number
}

let tasks = value(after: "--tasks", default: 12)
let samples = value(after: "--samples", default: 200_000)
let address = CommandLine.arguments.dropFirst().first { !$0.hasPrefix("--") && Int($0) == nil }

do {
    let settings = try ClusterSettings.load(file: nil, environment: ProcessInfo.processInfo.environment)
    let client = try await ClusterClient.connect(
        to: try address.map { try SocketAddress(parsing: $0) }, settings: settings, registry: TaskRegistry(kinds: [PiSample()]))
    defer { client.shutdown() }
    let inputs = (1...tasks).map { PiSample.Input(samples: samples, seed: $0) }
    let outputs = try await client.map(PiSample.self, over: inputs, retries: 2) { progress in
        FileHandle.standardError.write(Data("\r\(progress.done)/\(progress.total) tasks done".utf8))
    }
    FileHandle.standardError.write(Data("\n".utf8))
    let inside = outputs.reduce(0) { $0 + $1.inside }
    let total = outputs.reduce(0) { $0 + $1.samples }
    print(String(format: "pi ~ %.6f from %d samples", 4 * Double(inside) / Double(total), total))
} catch {
    FileHandle.standardError.write(Data("pi-estimate: \(error)\n".utf8))
    exit(1)
}
