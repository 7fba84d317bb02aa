import FoundationEssentials
import SpokesReplication

/// A bike job as a Raft group's state (`bikejob-ID` groups): the job, its
/// ``BikeJobBook`` (stations and users), whether it was cancelled and whether its report
/// was stored. The coordinator commits its ledger's events in the order it made them, so
/// every replica's book is the coordinator's book as of the last committed event, and
/// whichever replica leads next resumes the job from exactly there.
///
/// Commands are JSON: `{"job": ...}` (once; a repeat is ignored), `{"takeOver": EPOCH}`,
/// `{"events": [...], "epoch": EPOCH}`, `{"cancelled": REASON}` (the first reason stays),
/// `{"finished": true}`. (A group made by release 0.2 or earlier may start with
/// `"shards": [[NAME, ...], ...]`, a job whose stations were sharded: it is kept, so such
/// a job is ended, not run without its stations; see ``wasSharded``.) A command it cannot use (bad JSON, events before the job)
/// changes nothing and returns an `error:` result, the same on every replica.
///
/// **Epochs fence coordinators.** The job's first coordinator runs in epoch 0; a leader
/// that takes the job over first commits `takeOver` with the next epoch (one above the
/// job's: a take-over proposed from a stale state, or twice, is refused).
/// Events are applied only from the current epoch's coordinator: a batch from an older
/// one (a coordinator that was replaced, and whose proposal still reached a log) changes
/// nothing and returns an `error:` result, so its run stops. An event the book refuses is
/// counted in ``refusedEvents`` and its batch answers `error:` too: the coordinator's
/// ledger and the replicas no longer agree, so its run stops and a leader takes the job
/// over from the replicas' book (zero for a coordinator that keeps the contract).
public struct BikeJobMachine: ReplicatedStateMachine {
    private struct Command: Codable {
        var job: BikeJob?
        var takeOver: Int?
        var events: [BikeJobBook.Event]?
        var epoch: Int?
        var cancelled: String?
        var finished: Bool?
        var shards: [[String]]?
        var startedAt: Double?
    }

    private struct State: Codable {
        var job: BikeJob?
        var book: BikeJobBook?
        var cancelReason: String?
        var finished = false
        var refusedEvents = 0
        var epoch = 0
        var shards: [[String]]?
        var startedAt: Double?
    }

    private var state = State()

    public init() {}

    public var job: BikeJob? { state.job }
    /// The job's state as of the last committed event; nil before the job is.
    public var book: BikeJobBook? { state.book }
    public var finished: Bool { state.finished }
    /// Why the job was cancelled, once a cancellation is committed: a leader that takes
    /// it over runs none of its users.
    public var cancelReason: String? { state.cancelReason }
    /// Events that did not apply to the book.
    public var refusedEvents: Int { state.refusedEvents }
    /// The epoch whose coordinator may change the book (0 until a take-over).
    public var epoch: Int { state.epoch }
    /// Whether the job's stations were sharded (by release 0.2 or earlier): its book does
    /// not hold its stations, so no coordinator of this release may run it on.
    public var wasSharded: Bool { state.shards != nil }
    /// When the job's first coordinator started it (seconds since 1970), so a coordinator
    /// that takes it over reports its whole wall time; nil in a group made before this was kept.
    public var startedAt: Double? { state.startedAt }

    /// The command that records `job`, started at `startedAt` (seconds since 1970).
    public static func start(_ job: BikeJob, startedAt: Double? = nil) -> String {
        encode(Command(job: job, startedAt: startedAt))
    }
    /// The command that records the ledger's events, made by the coordinator of `epoch`
    /// (written by hand: ``BikeEventsCodec``, the same JSON `Codable` writes).
    public static func record(_ events: [BikeJobBook.Event], epoch: Int) -> String { BikeEventsCodec.encode(events, epoch: epoch) }
    /// The same command around events already written as one JSON array
    /// (``BikeEventsCodec/encodeEvents(_:)``, what a run hands the job layer).
    public static func record(eventsJSON events: String, epoch: Int) -> String { BikeEventsCodec.encode(eventsJSON: events, epoch: epoch) }
    /// The command a leader commits before it runs the job from the book, in `epoch`.
    public static func takeOver(epoch: Int) -> String { encode(Command(takeOver: epoch)) }
    /// What applying a command that was used answers.
    public static let applied = "ok"
    /// The command that records a cancellation.
    public static func cancel(_ reason: String) -> String { encode(Command(cancelled: reason)) }
    /// The command that marks the job's report stored.
    public static let finish = encode(Command(finished: true))

    private static func encode(_ command: Command) -> String {
        MachineText.encode(command)
    }

    public mutating func apply(_ command: String) -> String {
        // The hot command, a batch of events, read by hand; any other form by `Codable`.
        let decoded: Command
        if let (events, epoch) = BikeEventsCodec.decode(command) {
            decoded = Command(events: events, epoch: epoch)
        } else if let command = try? MachineText.decode(Command.self, from: command) {
            decoded = command
        } else {
            return "error: not a bike job command"
        }
        if let job = decoded.job, state.job == nil {
            guard (try? job.checkRanges()) != nil, (try? job.options.validate(for: job.network)) != nil else { return "error: a job out of range" }
            if let shards = decoded.shards {
                guard (1...16).contains(shards.count), shards.allSatisfy({ (1...7).contains($0.count) }) else {
                    return "error: a shard layout out of range"
                }
                state.shards = shards
            }
            state.job = job
            state.book = job.startingBook
            state.startedAt = decoded.startedAt.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        }
        if let epoch = decoded.takeOver {
            guard state.job != nil else { return "error: a take-over before the job" }
            guard epoch > state.epoch else { return "error: epoch \(epoch) is not above epoch \(state.epoch)" }
            state.epoch = epoch
        }
        if let events = decoded.events {
            guard var book = state.book else { return "error: events before the job" }
            guard !state.finished else { return "error: the job has finished" }
            let epoch = decoded.epoch ?? 0
            guard epoch == state.epoch else { return "error: events of epoch \(epoch), the job is in epoch \(state.epoch)" }
            // All or nothing: a batch with a refused event leaves the
            // book as it was (its coordinator stops on the error; a later one resumes from
            // a state some coordinator had).
            var refused = 0
            for event in events where !book.apply(event) { refused += 1 }
            state.refusedEvents += refused
            if refused > 0 { return "error: \(refused) of \(events.count) events did not apply; the batch changed nothing" }
            state.book = book
        }
        if let reason = decoded.cancelled, state.cancelReason == nil { state.cancelReason = String(reason.prefix(200)) }
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
