import Foundation
import SpokesReplication

/// A bike job as a Raft group's state (`bikejob-ID` groups): the job, its
/// ``BikeJobBook`` (stations and users), whether it was cancelled and whether its report
/// was stored. The coordinator commits its ledger's events in the order it made them, so
/// every replica's book is the coordinator's book as of the last committed event, and
/// whichever replica leads next resumes the job from exactly there.
///
/// Commands are JSON: `{"job": ...}` (once; a repeat is ignored), `{"events": [...]}`,
/// `{"cancelled": REASON}` (the first reason stays), `{"finished": true}`. A command it
/// cannot use (bad JSON, events before the job) changes nothing and returns an `error:`
/// result, the same on every replica. An event that does not apply (the book refuses it)
/// is counted in ``refusedEvents`` (zero for a coordinator that keeps the contract).
public struct BikeJobMachine: ReplicatedStateMachine {
    private struct Command: Codable {
        var job: BikeJob?
        var events: [BikeJobBook.Event]?
        var cancelled: String?
        var finished: Bool?
    }

    private struct State: Codable {
        var job: BikeJob?
        var book: BikeJobBook?
        var cancelReason: String?
        var finished = false
        var refusedEvents = 0
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

    /// The command that records `job`.
    public static func start(_ job: BikeJob) -> String { encode(Command(job: job)) }
    /// The command that records the ledger's events.
    public static func record(_ events: [BikeJobBook.Event]) -> String { encode(Command(events: events)) }
    /// The command that records a cancellation.
    public static func cancel(_ reason: String) -> String { encode(Command(cancelled: reason)) }
    /// The command that marks the job's report stored.
    public static let finish = encode(Command(finished: true))

    private static func encode(_ command: Command) -> String {
        (try? JSONEncoder().encode(command)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    public mutating func apply(_ command: String) -> String {
        guard let decoded = try? JSONDecoder().decode(Command.self, from: Data(command.utf8)) else { return "error: not a bike job command" }
        if let job = decoded.job, state.job == nil {
            guard (try? job.checkRanges()) != nil, (try? job.options.validate(for: job.network)) != nil else { return "error: a job out of range" }
            state.job = job
            state.book = job.startingBook
        }
        if let events = decoded.events {
            guard var book = state.book else { return "error: events before the job" }
            for event in events where !book.apply(event) { state.refusedEvents += 1 }
            state.book = book
        }
        if let reason = decoded.cancelled, state.cancelReason == nil { state.cancelReason = String(reason.prefix(200)) }
        if decoded.finished == true { state.finished = true }
        return "ok"
    }

    public func snapshot() -> String {
        (try? JSONEncoder().encode(state)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    public mutating func restore(_ snapshot: String) throws {
        state = try JSONDecoder().decode(State.self, from: Data(snapshot.utf8))
    }
}
