/// One fault the simulator injects, from `start` for `duration` virtual seconds. Faults
/// of a plan may overlap: each is counted while active (a node crashed twice restarts
/// when both have ended), so any subset of a plan is itself a valid plan, which is what
/// shrinking needs.
public struct SimulationFault: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case crash, pause, slow, partition, loss, duplication, delay
    }

    /// Which way a partition cuts the isolated nodes off from the rest.
    public enum Direction: String, Sendable, Hashable, CaseIterable {
        /// Neither side hears the other.
        case both
        /// The isolated nodes hear the rest but are not heard.
        case outbound
        /// The isolated nodes are heard but hear nothing.
        case inbound
    }

    public enum Effect: Sendable, Hashable {
        /// The node stops, losing everything it did not persist; it restarts as a new
        /// incarnation when the fault ends.
        case crash(node: String)
        /// The node stops running (SIGSTOP): messages and timers wait until it resumes.
        case pause(node: String)
        /// The node's timers and the messages it receives take `factor` times longer.
        case slow(node: String, factor: Double)
        case partition(isolated: [String], direction: Direction)
        /// Each message is lost with this probability.
        case loss(rate: Double)
        /// Each message is delivered twice with this probability.
        case duplication(rate: Double)
        /// Each message gets up to this many extra seconds of delay (reordering).
        case delay(maximum: Double)
    }

    public var start: Double
    public var duration: Double
    public var effect: Effect

    public init(start: Double, duration: Double, effect: Effect) {
        self.start = start
        self.duration = duration
        self.effect = effect
    }

    public var end: Double { start + duration }

    public var kind: Kind {
        switch effect {
        case .crash: .crash
        case .pause: .pause
        case .slow: .slow
        case .partition: .partition
        case .loss: .loss
        case .duplication: .duplication
        case .delay: .delay
        }
    }

    public var description: String {
        let window = "\(format(start))s+\(format(duration))s"
        return switch effect {
        case .crash(let node): "\(window) crash \(node)"
        case .pause(let node): "\(window) pause \(node)"
        case .slow(let node, let factor): "\(window) slow \(node) x\(format(factor))"
        case .partition(let isolated, let direction): "\(window) partition \(isolated.joined(separator: ",")) \(direction.rawValue)"
        case .loss(let rate): "\(window) loss \(format(rate))"
        case .duplication(let rate): "\(window) duplication \(format(rate))"
        case .delay(let maximum): "\(window) delay up to \(format(maximum))s"
        }
    }

    /// A random plan: `count` faults of the given kinds on `nodes`, starting within
    /// `window` seconds. Half the crashes, pauses and slowdowns target a role (when the
    /// model has roles), resolved to a node when the fault begins.
    public static func plan(nodes: [String], roles: [String] = [], window: Double, count: ClosedRange<Int>, kinds: [Kind], random: inout SimulationRandom) -> [SimulationFault] {
        guard !nodes.isEmpty, !kinds.isEmpty else { return [] }
        func target() -> String {
            let node = random.element(of: nodes)
            return !roles.isEmpty && random.chance(0.5) ? random.element(of: roles) : node
        }
        return (0..<random.integer(in: count)).map { _ in
            let start = random.uniform(in: 0.5...max(0.5, window))
            switch random.element(of: kinds) {
            case .crash:
                return SimulationFault(start: start, duration: random.uniform(in: 0.1...4), effect: .crash(node: target()))
            case .pause:
                return SimulationFault(start: start, duration: random.uniform(in: 0.2...4), effect: .pause(node: target()))
            case .slow:
                return SimulationFault(start: start, duration: random.uniform(in: 1...6), effect: .slow(node: target(), factor: random.uniform(in: 3...30)))
            case .partition:
                var shuffled = nodes
                for index in stride(from: shuffled.count - 1, to: 0, by: -1) { shuffled.swapAt(index, random.index(below: index + 1)) }
                let size = random.integer(in: 1...max(1, nodes.count / 2))
                return SimulationFault(start: start, duration: random.uniform(in: 0.5...5), effect: .partition(isolated: shuffled.prefix(size).sorted(), direction: random.element(of: Direction.allCases)))
            case .loss:
                return SimulationFault(start: start, duration: random.uniform(in: 1...5), effect: .loss(rate: random.uniform(in: 0.05...0.4)))
            case .duplication:
                return SimulationFault(start: start, duration: random.uniform(in: 1...5), effect: .duplication(rate: random.uniform(in: 0.05...0.3)))
            case .delay:
                return SimulationFault(start: start, duration: random.uniform(in: 1...5), effect: .delay(maximum: random.uniform(in: 0.01...0.3)))
            }
        }.sorted { $0.start < $1.start }
    }
}

func format(_ number: Double) -> String {
    let scaled = (number * 1000).rounded() / 1000
    return scaled == scaled.rounded() ? String(Int(scaled)) : String(scaled)
}
