import SpokesConsensus

/// The application a simulated group replicates: the order in which distinct commands
/// were first applied. Commands are client-chosen ids, so a command a client retried
/// (and that is therefore in the log twice) takes effect once, as the job ledger's
/// idempotent moves do.
struct SimulatedStateMachine: Hashable {
    private(set) var appliedIndex = 0
    private(set) var order: [String] = []
    private var seen: Set<String> = []

    mutating func apply(_ entry: RaftEntry) {
        appliedIndex = entry.index
        if let command = entry.command, seen.insert(command).inserted { order.append(command) }
    }

    var snapshotData: String { order.joined(separator: ",") }

    mutating func restore(_ snapshot: RaftSnapshot) {
        appliedIndex = snapshot.index
        order = Self.order(from: snapshot.data)
        seen = Set(order)
    }

    static func order(from data: String) -> [String] {
        data.isEmpty ? [] : data.split(separator: ",").map(String.init)
    }

    /// The effect of applying `entries` from scratch.
    static func order(of entries: some Sequence<RaftEntry>) -> [String] {
        var machine = SimulatedStateMachine()
        for entry in entries { machine.apply(entry) }
        return machine.order
    }
}
