/// How a run is set up. The seed decides everything else that is left to chance.
public struct SimulationOptions: Sendable, Hashable {
    public var seed: UInt64
    /// Faults start within this many virtual seconds of the beginning.
    public var faultWindow: Double
    public var faultCount: ClosedRange<Int>
    public var faultKinds: [SimulationFault.Kind]
    /// The run goes on this long after the last fault ends (the liveness phase).
    public var settle: Double
    /// Every message's delay on a healthy network.
    public var delay: ClosedRange<Double>
    /// Up to this much is added to every timer (clock-tick jitter).
    public var timerJitter: Double
    /// A run that processes more events than this stops with a violation (a livelock).
    public var maxEvents: Int
    /// Keep a printable line per event (for the trace of a failing seed).
    public var recordTrace: Bool

    public init(seed: UInt64, faultWindow: Double = 15, faultCount: ClosedRange<Int> = 1...6, faultKinds: [SimulationFault.Kind] = SimulationFault.Kind.allCases, settle: Double = 10, delay: ClosedRange<Double> = 0.0005...0.005, timerJitter: Double = 0.002, maxEvents: Int = 2_000_000, recordTrace: Bool = false) {
        self.seed = seed
        self.faultWindow = faultWindow
        self.faultCount = faultCount
        self.faultKinds = faultKinds
        self.settle = settle
        self.delay = delay
        self.timerJitter = timerJitter
        self.maxEvents = maxEvents
        self.recordTrace = recordTrace
    }
}

/// An invariant that failed: when, after how many events, and what.
public struct SimulationViolation: Sendable, Hashable, CustomStringConvertible {
    public var time: Double
    public var event: Int
    public var message: String

    public var description: String { "at \(fixed(time, 6))s (event \(event)): \(message)" }
}

/// What one run did.
public struct SimulationResult: Sendable {
    public var seed: UInt64
    public var faults: [SimulationFault]
    /// FNV-1a over every event: the same for every run of the same seed and plan.
    public var traceHash: UInt64
    public var events: Int
    public var virtualSeconds: Double
    /// When the last fault ended.
    public var healedAt: Double
    public var violation: SimulationViolation?
    /// One line per event, when `recordTrace` was set.
    public var trace: [String]

    public var failed: Bool { violation != nil }
}

/// The deterministic simulation kernel: a virtual clock and an event queue ordered by
/// (time, sequence number), one seeded generator, a virtual network with the faults a
/// seed chooses, and a model (`SimulationModel`) whose invariants are checked after
/// every event. Single-threaded: a seed and a fault plan replay a run exactly, event
/// for event.
public enum Simulation<Model: SimulationModel> {
    /// Runs `model` under `options`. The fault plan is drawn from the seed first;
    /// `faults`, when given, replaces it (the generator still draws the plan, so the rest
    /// of the run sees the same numbers): that is how a plan is shrunk.
    public static func run(_ model: Model, options: SimulationOptions, faults: [SimulationFault]? = nil) -> SimulationResult {
        play(model, options: options, faults: faults).result
    }

    /// `run`, also returning the model as the run left it (for measurements).
    public static func play(_ model: Model, options: SimulationOptions, faults: [SimulationFault]? = nil) -> (result: SimulationResult, model: Model) {
        var run = Run(model: model, options: options, faults: faults)
        let result = run.execute()
        return (result, run.model)
    }

    /// Delta debugging (ddmin) over a failing run's faults: the smallest plan found that
    /// still fails with the same seed, re-run with its trace recorded. At most `maxRuns`
    /// runs.
    public static func shrink(_ failing: SimulationResult, model makeModel: () -> Model, options: SimulationOptions, maxRuns: Int = 300) -> SimulationResult {
        var runs = 0
        func fails(_ faults: [SimulationFault]) -> Bool {
            runs += 1
            return run(makeModel(), options: options, faults: faults).failed
        }
        var faults = failing.faults
        if !faults.isEmpty, fails([]) { faults = [] }
        var granularity = 2
        while faults.count >= 2, runs < maxRuns {
            let size = (faults.count + granularity - 1) / granularity
            let chunks = stride(from: 0, to: faults.count, by: size).map { Array(faults[$0..<min($0 + size, faults.count)]) }
            var reduced = false
            for chunk in chunks where runs < maxRuns && fails(chunk) {
                faults = chunk
                granularity = 2
                reduced = true
                break
            }
            if !reduced {
                for (number, _) in chunks.enumerated() where runs < maxRuns {
                    let complement = chunks.enumerated().filter { $0.offset != number }.flatMap(\.element)
                    if fails(complement) {
                        faults = complement
                        granularity = max(granularity - 1, 2)
                        reduced = true
                        break
                    }
                }
            }
            if !reduced {
                if granularity >= faults.count { break }
                granularity = min(faults.count, granularity * 2)
            }
        }
        if faults.count == 1, fails([]) { faults = [] }
        var traced = options
        traced.recordTrace = true
        return run(makeModel(), options: traced, faults: faults)
    }

    /// A failing run, printed: seed, fault plan, violation, and the last `lines` lines of
    /// its trace.
    public static func report(_ result: SimulationResult, lines: Int = 400) -> String {
        var text = "seed \(result.seed): \(result.violation?.description ?? "no violation")\n"
        text += "faults (\(result.faults.count)):\n"
        for fault in result.faults { text += "  \(fault)\n" }
        if !result.trace.isEmpty {
            let shown = result.trace.suffix(lines)
            text += "trace (\(result.trace.count) events\(shown.count < result.trace.count ? ", the last \(shown.count)" : "")):\n"
            for line in shown { text += "  \(line)\n" }
        }
        return text
    }

    private struct Delivery {
        var from: Int
        var to: Int
        var message: Model.Message
    }

    private struct TimerFiring {
        var node: Int
        var incarnation: Int
        var timer: Model.Timer
    }

    private enum Event {
        case start(node: Int)
        case deliver(Delivery)
        case timer(TimerFiring)
        case faultBegins(Int)
        case faultEnds(Int)
        case healed
        case end
    }

    private struct NodeState {
        var down = 0
        var paused = 0
        var incarnation = 0
        var slowFactors: [Double] = []
        var deferred: [Event] = []

        var slowness: Double { slowFactors.max() ?? 1 }
    }

    private struct Run {
        var model: Model
        let options: SimulationOptions
        let names: [String]
        let index: [String: Int]
        var random: SimulationRandom
        var queue = EventQueue<Event>()
        var nodes: [NodeState]
        var cuts: [Int]
        var lossRates: [Double] = []
        var duplicationRates: [Double] = []
        var extraDelays: [Double] = []
        let faults: [SimulationFault]
        var hasher = TraceHasher()
        let trace = TraceLines()
        /// The node each role-targeted fault hit when it began.
        var resolvedTargets: [Int: String] = [:]
        var now = 0.0
        var events = 0
        let healedAt: Double

        init(model: Model, options: SimulationOptions, faults explicit: [SimulationFault]?) {
            self.model = model
            self.options = options
            names = model.nodes
            index = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($0.element, $0.offset) })
            random = SimulationRandom(seed: options.seed)
            let drawn = SimulationFault.plan(nodes: model.faultableNodes, roles: model.faultRoles, window: options.faultWindow, count: options.faultCount, kinds: options.faultKinds, random: &random)
            faults = explicit ?? drawn
            nodes = Array(repeating: NodeState(), count: names.count)
            cuts = Array(repeating: 0, count: names.count * names.count)
            healedAt = faults.map(\.end).max() ?? 0
        }

        mutating func execute() -> SimulationResult {
            for node in names.indices { queue.push(.start(node: node), at: 0) }
            for (number, fault) in faults.enumerated() {
                queue.push(.faultBegins(number), at: fault.start)
                queue.push(.faultEnds(number), at: fault.end)
            }
            queue.push(.healed, at: healedAt)
            queue.push(.end, at: healedAt + options.settle)
            var violation: SimulationViolation?
            while let scheduled = queue.pop() {
                let event = scheduled.event
                now = scheduled.time
                events += 1
                if case .end = event {
                    if let missing = model.finalViolation(now: now) { violation = SimulationViolation(time: now, event: events, message: missing) }
                    break
                }
                process(event)
                if let broken = model.violation {
                    violation = SimulationViolation(time: now, event: events, message: broken)
                    break
                }
                if events >= options.maxEvents {
                    violation = SimulationViolation(time: now, event: events, message: "more than \(options.maxEvents) events: livelock?")
                    break
                }
            }
            if let violation { record("VIOLATION \(violation.message)") }
            return SimulationResult(seed: options.seed, faults: faults, traceHash: hasher.value, events: events, virtualSeconds: now, healedAt: healedAt, violation: violation, trace: trace.lines)
        }

        func record(_ line: @autoclosure () -> String) {
            if options.recordTrace { trace.lines.append("\(fixed(now, 6)) \(line())") }
        }

        mutating func process(_ event: Event) {
            hasher.combine(now)
            switch event {
            case .start(let node):
                guard nodes[node].down == 0 else { return }
                if nodes[node].paused > 0 { return nodes[node].deferred.append(event) }
                hasher.combine(1)
                hasher.combine(node)
                record("\(names[node]) starts (incarnation \(nodes[node].incarnation))")
                callModel(node) { model, context in model.start(context.node, in: &context) }
            case .deliver(let delivery):
                let (from, to, message) = (delivery.from, delivery.to, delivery.message)
                guard nodes[to].down == 0 else { return record("\(names[from]) -> \(names[to]) lost (down): \(message)") }
                if nodes[to].paused > 0 { return nodes[to].deferred.append(event) }
                hasher.combine(2)
                hasher.combine(from)
                hasher.combine(to)
                message.trace(into: &hasher)
                record("\(names[from]) -> \(names[to]) \(message)")
                let sender = names[from]
                callModel(to) { model, context in model.receive(message, from: sender, at: context.node, in: &context) }
            case .timer(let firing):
                let (node, incarnation, timer) = (firing.node, firing.incarnation, firing.timer)
                guard incarnation == nodes[node].incarnation, nodes[node].down == 0 else { return }
                if nodes[node].paused > 0 { return nodes[node].deferred.append(event) }
                hasher.combine(3)
                hasher.combine(node)
                timer.trace(into: &hasher)
                record("\(names[node]) timer \(timer)")
                callModel(node) { model, context in model.fire(timer, at: context.node, in: &context) }
            case .faultBegins(let number):
                hasher.combine(4)
                hasher.combine(number)
                record("FAULT \(faults[number])")
                begin(faults[number].effect, number: number)
            case .faultEnds(let number):
                hasher.combine(5)
                hasher.combine(number)
                record("FAULT ENDS \(faults[number])")
                end(faults[number].effect, number: number)
            case .healed:
                hasher.combine(6)
                record("every fault has ended")
                callModel(nil) { model, context in model.healed(in: &context) }
            case .end:
                break
            }
        }

        /// The node a fault hits: its own, or whoever plays its role as it begins.
        mutating func target(_ name: String, number: Int, beginning: Bool) -> Int? {
            guard name.hasPrefix("@") else { return index[name] }
            if beginning {
                resolvedTargets[number] = model.node(playing: name)
                record("  \(name) is \(resolvedTargets[number] ?? "nobody")")
            }
            return resolvedTargets[number].flatMap { index[$0] }
        }

        mutating func begin(_ effect: SimulationFault.Effect, number: Int) {
            switch effect {
            case .crash(let name):
                guard let node = target(name, number: number, beginning: true) else { return }
                nodes[node].down += 1
                guard nodes[node].down == 1 else { return }
                nodes[node].incarnation += 1
                nodes[node].deferred = []
                callModel(node, keepOutput: false) { model, context in model.crash(context.node, in: &context) }
            case .pause(let name):
                if let node = target(name, number: number, beginning: true) { nodes[node].paused += 1 }
            case .slow(let name, let factor):
                if let node = target(name, number: number, beginning: true) { nodes[node].slowFactors.append(factor) }
            case .partition(let isolated, let direction):
                cut(isolated: isolated, direction: direction, by: 1)
            case .loss(let rate): lossRates.append(rate)
            case .duplication(let rate): duplicationRates.append(rate)
            case .delay(let maximum): extraDelays.append(maximum)
            }
        }

        mutating func end(_ effect: SimulationFault.Effect, number: Int) {
            switch effect {
            case .crash(let name):
                guard let node = target(name, number: number, beginning: false) else { return }
                nodes[node].down -= 1
                if nodes[node].down == 0 { queue.push(.start(node: node), at: now) }
            case .pause(let name):
                guard let node = target(name, number: number, beginning: false) else { return }
                nodes[node].paused -= 1
                if nodes[node].paused == 0 {
                    for event in nodes[node].deferred { queue.push(event, at: now) }
                    nodes[node].deferred = []
                }
            case .slow(let name, let factor):
                guard let node = target(name, number: number, beginning: false), let position = nodes[node].slowFactors.firstIndex(of: factor) else { return }
                nodes[node].slowFactors.remove(at: position)
            case .partition(let isolated, let direction):
                cut(isolated: isolated, direction: direction, by: -1)
            case .loss(let rate): Self.remove(rate, from: &lossRates)
            case .duplication(let rate): Self.remove(rate, from: &duplicationRates)
            case .delay(let maximum): Self.remove(maximum, from: &extraDelays)
            }
        }

        static func remove(_ value: Double, from list: inout [Double]) {
            if let position = list.firstIndex(of: value) { list.remove(at: position) }
        }

        mutating func cut(isolated: [String], direction: SimulationFault.Direction, by change: Int) {
            let inside = Set(isolated.compactMap { index[$0] })
            for a in inside {
                for b in names.indices where !inside.contains(b) {
                    if direction != .inbound { cuts[a * names.count + b] += change }
                    if direction != .outbound { cuts[b * names.count + a] += change }
                }
            }
        }

        /// Lets the model handle one event at `node` (nil: no node), then carries out what
        /// it asked for.
        mutating func callModel(_ node: Int?, keepOutput: Bool = true, _ body: (inout Model, inout SimulationContext<Model>) -> Void) {
            var context = SimulationContext<Model>(now: now, node: node.map { names[$0] } ?? "", random: random, tracing: options.recordTrace)
            body(&model, &context)
            random = context.random
            for note in context.notes { record("  \(note)") }
            guard keepOutput, let node else { return }
            for send in context.sends { route(send.message, from: node, to: send.receiver) }
            for request in context.timers {
                let stretched = request.delay * nodes[node].slowness + random.uniform(in: 0...options.timerJitter)
                queue.push(.timer(TimerFiring(node: node, incarnation: nodes[node].incarnation, timer: request.timer)), at: now + stretched)
            }
        }

        mutating func route(_ message: Model.Message, from sender: Int, to receiverName: String) {
            guard let receiver = index[receiverName] else { return record("\(names[sender]) -> \(receiverName) (no such node)") }
            if cuts[sender * names.count + receiver] > 0 { return record("\(names[sender]) -> \(receiverName) cut: \(message)") }
            if let rate = lossRates.max(), random.chance(rate) { return record("\(names[sender]) -> \(receiverName) lost: \(message)") }
            let copies = (duplicationRates.max()).map { random.chance($0) ? 2 : 1 } ?? 1
            for _ in 0..<copies {
                var delay = random.uniform(in: options.delay)
                if let extra = extraDelays.max() { delay += random.uniform(in: 0...extra) }
                queue.push(.deliver(Delivery(from: sender, to: receiver, message: message)), at: now + delay * nodes[receiver].slowness)
            }
        }
    }
}

/// The printed trace of a run, appended to while the run's state is being changed.
private final class TraceLines {
    var lines: [String] = []
}

/// `number` with `decimals` digits after the point, without Foundation ("inf", "nan" for
/// those, and for magnitudes an `Int` cannot hold: a sweep's slowest recovery is infinite
/// when a seed never recovered, and printing it trapped).
func fixed(_ number: Double, _ decimals: Int) -> String {
    guard number.isFinite, abs(number) < 1e15 else { return number.isNaN ? "nan" : number < 0 ? "-inf" : "inf" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = Int((abs(number) * scale).rounded())
    let whole = scaled / Int(scale)
    var fraction = String(scaled % Int(scale))
    while fraction.count < decimals { fraction = "0" + fraction }
    return (number < 0 ? "-" : "") + "\(whole).\(fraction)"
}
