@testable import SpokesSimulation

/// A toy model for the kernel's own tests: every node sends a numbered ping to every
/// other node every 0.1 s, and records what arrives and when.
struct PingModel: SimulationModel {
    struct Ping: SimulationTraceable, Sendable, Hashable {
        var sender: String
        var number: Int
        var incarnation: Int

        var description: String { "ping \(sender)#\(number)" }
        func trace(into hasher: inout TraceHasher) {
            hasher.combine(sender)
            hasher.combine(number)
        }
    }

    struct Tick: SimulationTraceable, Sendable {
        var description: String { "tick" }
        func trace(into hasher: inout TraceHasher) { hasher.combine(1) }
    }

    struct Arrival: Hashable {
        var at: String
        var ping: Ping
        var time: Double
    }

    let nodes: [String]
    var sent: [String: Int] = [:]
    var incarnations: [String: Int] = [:]
    var arrivals: [Arrival] = []
    var crashes: [String] = []
    var tickTimes: [String: [Double]] = [:]
    /// Fails once every node named here has crashed (for the shrinker's test).
    var failWhenCrashed: Set<String> = []
    var healedAt: Double?

    init(nodes: [String] = ["a", "b", "c"]) { self.nodes = nodes }

    var violation: String? {
        !failWhenCrashed.isEmpty && failWhenCrashed.isSubset(of: crashes) ? "\(failWhenCrashed.sorted()) all crashed" : nil
    }

    func finalViolation(now: Double) -> String? { nil }

    mutating func start(_ node: String, in context: inout SimulationContext<Self>) {
        incarnations[node, default: 0] += 1
        context.schedule(Tick(), after: 0.1)
    }

    mutating func receive(_ message: Ping, from sender: String, at node: String, in context: inout SimulationContext<Self>) {
        arrivals.append(Arrival(at: node, ping: message, time: context.now))
    }

    mutating func fire(_ timer: Tick, at node: String, in context: inout SimulationContext<Self>) {
        tickTimes[node, default: []].append(context.now)
        sent[node, default: 0] += 1
        for other in nodes where other != node {
            context.send(Ping(sender: node, number: sent[node]!, incarnation: incarnations[node]!), to: other)
        }
        context.schedule(Tick(), after: 0.1)
    }

    mutating func crash(_ node: String, in context: inout SimulationContext<Self>) {
        crashes.append(node)
    }

    mutating func healed(in context: inout SimulationContext<Self>) {
        healedAt = context.now
    }

    func arrivals(at node: String, from sender: String) -> [Arrival] {
        arrivals.filter { $0.at == node && $0.ping.sender == sender }
    }
}
