import FoundationEssentials

/// What a Raft group drives: the application's state, changed only by committed commands.
///
/// A `RaftHost` owns one value per group and calls it from that group's executor only:
/// `apply` once per committed command, in log order, on every replica; `restore` when a
/// snapshot replaces the state (after a restart from one, or when the leader sent one);
/// `snapshot` when the host compacts the log. Every replica must reach the same state
/// and the same results from the same commands, so `apply` is deterministic: no clock,
/// no randomness, no I/O, and a command it cannot use gets an error result (the same on
/// every replica), never a crash. Commands, results and snapshots are text (JSON by
/// convention); Raft never looks inside.
public protocol ReplicatedStateMachine: Sendable {
    /// Applies one committed command and returns its result, which `RaftHost.propose`
    /// hands to the proposer.
    mutating func apply(_ command: String) -> String
    /// The whole state as text.
    func snapshot() -> String
    /// Replaces the whole state with a snapshot's; throws (and leaves the state alone)
    /// if `snapshot` is not a snapshot of this kind of machine.
    mutating func restore(_ snapshot: String) throws
}

/// The JSON text the job machines use for their commands and snapshots (one way to write
/// and read it, so every machine's text is alike).
public enum MachineText {
    /// `value` as JSON text; `"{}"` if it cannot be encoded (a machine's own Codable
    /// commands and states always can).
    public static func encode(_ value: some Encodable) -> String {
        (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// `value` as JSON text with its keys sorted, so equal values write the same text on
    /// every replica (for snapshots a check compares byte for byte); `"{}"` if it cannot
    /// be encoded.
    public static func canonical(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// `text` read as a `T`.
    public static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }
}
