/// The system under simulation: every node's state machines and the shells around
/// them, driven by the kernel one event at a time. The kernel owns time, the network,
/// faults and the generator; the model reacts through its `SimulationContext` (send a
/// message, set a timer, draw a number, note a line for the trace) and records its own
/// invariants' violations as they happen.
public protocol SimulationModel {
    associatedtype Message: SimulationTraceable & Sendable
    associatedtype Timer: SimulationTraceable & Sendable

    /// The node names, fixed for the run.
    var nodes: [String] { get }
    /// The nodes crashes, pauses, slowness and partitions may hit.
    var faultableNodes: [String] { get }
    /// Roles (names starting with "@", such as "@leader") a crash, pause or slowness may
    /// target instead of a fixed node: the node is chosen when the fault begins.
    var faultRoles: [String] { get }
    /// The node playing `role` now, if any.
    func node(playing role: String) -> String?

    /// The node starts: at time 0, and again after each crash (a new incarnation that
    /// keeps only what the model says it persisted).
    mutating func start(_ node: String, in context: inout SimulationContext<Self>)
    /// A message arrives at `node`.
    mutating func receive(_ message: Message, from sender: String, at node: String, in context: inout SimulationContext<Self>)
    /// A timer `node` set fires (timers of an earlier incarnation never do).
    mutating func fire(_ timer: Timer, at node: String, in context: inout SimulationContext<Self>)
    /// The node crashed: drop its volatile state (`context.random` may decide what a
    /// write in progress left on disk).
    mutating func crash(_ node: String, in context: inout SimulationContext<Self>)
    /// Every fault has ended; the liveness phase begins.
    mutating func healed(in context: inout SimulationContext<Self>)

    /// The first invariant violated so far, if any; checked after every event.
    var violation: String? { get }
    /// What should have happened by the end of the run and did not (liveness).
    func finalViolation(now: Double) -> String?
}

extension SimulationModel {
    public var faultableNodes: [String] { nodes }
    public var faultRoles: [String] { [] }
    public func node(playing role: String) -> String? { nil }
}

/// What a model may do while it handles one event.
public struct SimulationContext<Model: SimulationModel> {
    /// Virtual time, seconds since the run began.
    public let now: Double
    /// The node handling the event ("" for `healed`).
    public let node: String
    /// The run's generator: draws here are part of the run.
    public var random: SimulationRandom

    struct Send {
        var receiver: String
        var message: Model.Message
    }

    struct TimerRequest {
        var delay: Double
        var timer: Model.Timer
    }

    var sends: [Send] = []
    var timers: [TimerRequest] = []
    var notes: [String] = []
    let tracing: Bool

    init(now: Double, node: String, random: SimulationRandom, tracing: Bool) {
        self.now = now
        self.node = node
        self.random = random
        self.tracing = tracing
    }

    /// Sends `message` from this node over the simulated network.
    public mutating func send(_ message: Model.Message, to receiver: String) {
        sends.append(Send(receiver: receiver, message: message))
    }

    /// Fires `timer` at this node after `delay` seconds (stretched if the node is slow,
    /// plus tick jitter).
    public mutating func schedule(_ timer: Model.Timer, after delay: Double) {
        timers.append(TimerRequest(delay: max(0, delay), timer: timer))
    }

    /// A line for the printed trace (evaluated only when a trace is recorded).
    public mutating func note(_ text: @autoclosure () -> String) {
        if tracing { notes.append(text()) }
    }
}
