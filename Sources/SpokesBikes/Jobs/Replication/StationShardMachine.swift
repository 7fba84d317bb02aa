import Foundation
import SpokesReplication

/// One shard of a sharded bike job as a Raft group's state (`bikeshard-JOB-K` groups):
/// the shard's ``StationShardBook`` as of its last committed event, and the epoch whose
/// host may change it.
///
/// Commands are JSON: `{"book": ...}` (once; a repeat is ignored), `{"takeOver": EPOCH}`,
/// `{"events": [...], "seqs": [...], "outcomes": [...], "epoch": EPOCH}`,
/// `{"finished": true}`. Events apply with their host's outcomes. As in
/// ``BikeJobMachine``, epochs fence hosts: a host that takes the shard over commits the
/// job's new epoch first, and a batch of another epoch changes nothing and answers
/// `error:`, so a replaced host's late batch stops its run. A batch may be proposed twice
/// (the host could not tell whether the first proposal committed): each event carries its
/// sequence number, and an event at or below its user's last one here is skipped
/// (``StationShardBook/apply(_:seq:outcome:)``). A command it cannot use answers `error:`, the
/// same on every replica, and a batch with an event its book refuses changes nothing.
public struct StationShardMachine: ReplicatedStateMachine {
    private struct Command: Codable {
        var book: StationShardBook?
        var takeOver: Int?
        var events: [StationShardBook.Event]?
        var epoch: Int?
        /// Each event's sequence number on its host.
        var seqs: [Int]?
        /// Each event's outcome on its host.
        var outcomes: [Bool]?
        var finished: Bool?
    }

    private struct State: Codable {
        var book: StationShardBook?
        var epoch = 0
        var finished = false
        var refusedEvents = 0
    }

    private var state = State()

    public init() {}

    /// The shard as of its last committed event; nil before its book is.
    public var book: StationShardBook? { state.book }
    public var epoch: Int { state.epoch }
    public var finished: Bool { state.finished }
    /// Events that did not apply to the book (zero for hosts that keep the contract).
    public var refusedEvents: Int { state.refusedEvents }

    /// The command that records the shard's starting book.
    public static func start(_ book: StationShardBook) -> String { encode(Command(book: book)) }
    /// The command that records a host's events `seqs`, made in `epoch` with `outcomes`.
    public static func record(_ events: [StationShardBook.Event], seqs: [Int], outcomes: [Bool], epoch: Int) -> String {
        encode(Command(events: events, epoch: epoch, seqs: seqs, outcomes: outcomes))
    }
    /// The command a new host commits before it hosts the shard, in `epoch`.
    public static func takeOver(epoch: Int) -> String { encode(Command(takeOver: epoch)) }
    /// The command that marks the shard's job finished.
    public static let finish = encode(Command(finished: true))
    /// What applying a command that was used answers.
    public static let applied = "ok"

    private static func encode(_ command: Command) -> String {
        MachineText.encode(command)
    }

    public mutating func apply(_ command: String) -> String {
        guard let decoded = try? MachineText.decode(Command.self, from: command) else { return "error: not a station shard command" }
        if let book = decoded.book, state.book == nil {
            guard book.applied == 0, book.marks.isEmpty else { return "error: a shard out of range" }
            state.book = book
        }
        if let epoch = decoded.takeOver {
            guard state.book != nil else { return "error: a take-over before the shard" }
            guard epoch > state.epoch else { return "error: epoch \(epoch) is not above epoch \(state.epoch)" }
            state.epoch = epoch
            // Its job goes on (it was taken over after its shards ended, before its report was kept).
            state.finished = false
        }
        if let events = decoded.events {
            guard var book = state.book else { return "error: events before the shard" }
            guard !state.finished else { return "error: the job has finished" }
            let epoch = decoded.epoch ?? 0
            guard epoch == state.epoch else { return "error: events of epoch \(epoch), the shard is in epoch \(state.epoch)" }
            guard let seqs = decoded.seqs, let outcomes = decoded.outcomes, seqs.count == events.count, outcomes.count == events.count,
                  seqs.allSatisfy({ $0 >= 1 }) else {
                return "error: a batch without a sequence number and an outcome for each event"
            }
            var refused = 0
            for index in events.indices where book.replay(events[index], seq: seqs[index], outcome: outcomes[index]) == .refused { refused += 1 }
            // All or nothing: a later event of a user whose earlier one was refused must
            // not apply either.
            guard refused == 0 else {
                state.refusedEvents += refused
                return "error: \(refused) of \(events.count) events did not apply; the batch changed nothing"
            }
            state.book = book
        }
        if decoded.finished == true { state.finished = true }
        return Self.applied
    }

    public func snapshot() -> String {
        MachineText.encode(state)
    }

    public mutating func restore(_ snapshot: String) throws {
        state = try MachineText.decode(State.self, from: snapshot)
    }
}
