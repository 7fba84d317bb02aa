import SpokesCluster

/// A replicated bike job's hot command, `{"events": [...], "epoch": N}` (a batch of the
/// ledger's events, ``BikeJobMachine/record(_:epoch:)``), written and read by hand (issue
/// 33 §1): the coordinator encodes one per batch to commit it and every replica,
/// the coordinator's own included, decodes it to apply it, and through `Codable` that was
/// a quarter of a busy coordinator's time.
///
/// The form is the JSON `Codable` makes of ``BikeJobMachine``'s command (an event is its
/// case's name around its values, unlabelled values as `_0` and `_1`, a node left out when
/// nil), keys in their declared order, so replicas and logs of earlier releases read what
/// is written here. ``decode(_:)`` reads only that exact form, and answers nil for anything
/// else (another command, another spelling of this one: `JSONEncoder` orders keys
/// differently from one encoding to the next, so an earlier release's batches mostly go
/// this way), which the machine then decodes with `JSONDecoder`, as before: a faster way
/// to the same value, never another value.
enum BikeEventsCodec {
    static func encode(_ events: [BikeJobBook.Event], epoch: Int) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(32 + events.count * 72)
        out += Key.events
        writeArray(events, to: &out)
        out += Key.epochAfterEvents
        HandJSON.integer(epoch, to: &out)
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// The command of ``encode(_:epoch:)`` around `events`, an array ``encodeEvents(_:)``
    /// wrote: the same text.
    static func encode(eventsJSON events: String, epoch: Int) -> String {
        var out = Key.events
        out.reserveCapacity(events.utf8.count + 32)
        out += events.utf8
        out += Key.epochAfterEvents
        HandJSON.integer(epoch, to: &out)
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// `events` alone, as the JSON array `Codable` makes of them: what a bike job's run
    /// hands the job layer to commit (``BikeJobBook/apply(events:)`` reads it back).
    static func encodeEvents(_ events: [BikeJobBook.Event]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(2 + events.count * 72)
        writeArray(events, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The events of an array in exactly the form ``encodeEvents(_:)`` writes; nil otherwise.
    static func decodeEvents(_ bytes: ArraySlice<UInt8>) -> [BikeJobBook.Event]? {
        var reader = HandJSON.Reader(bytes: bytes)
        guard let events = readArray(&reader), reader.atEnd else { return nil }
        return events
    }

    private static func writeArray(_ events: [BikeJobBook.Event], to out: inout [UInt8]) { HandJSON.array(events, to: &out, write) }

    private static func readArray(_ reader: inout HandJSON.Reader) -> [BikeJobBook.Event]? { reader.array(readEvent) }

    /// The events and epoch of a command in exactly the form ``encode(_:epoch:)`` writes;
    /// nil otherwise.
    static func decode(_ command: String) -> (events: [BikeJobBook.Event], epoch: Int)? {
        read(Array(command.utf8)[...])
    }

    private static func read(_ bytes: ArraySlice<UInt8>) -> (events: [BikeJobBook.Event], epoch: Int)? {
        var reader = HandJSON.Reader(bytes: bytes)
        guard reader.literal(Key.events), let events = readArray(&reader) else { return nil }
        guard reader.literal(Key.epochAfterEvents), let epoch = reader.integer(), reader.byte(UInt8(ascii: "}")), reader.atEnd else { return nil }
        return (events, epoch)
    }

    // MARK: - Events

    private static func write(_ event: BikeJobBook.Event, to out: inout [UInt8]) {
        switch event {
        case .attempt(let user, let attempt):
            writeUser(user, attempt: attempt, after: Key.attempt, to: &out)
            out += Key.close2
        case .move(let move, let station, let take):
            writeUser(move.user, attempt: move.attempt, after: Key.move, to: &out)
            out += Key.step
            HandJSON.integer(move.step, to: &out)
            out += Key.station
            HandJSON.integer(station, to: &out)
            out += Key.take
            HandJSON.bool(take, to: &out)
            out += Key.close2
        case .accepted(let user, let attempt, let ending):
            writeUser(user, attempt: attempt, after: Key.accepted, to: &out)
            out += Key.ending
            HandJSON.string(ending.rawValue, to: &out)
            out += Key.close2
        case .ended(let user, let end):
            out += Key.ended
            HandJSON.integer(user, to: &out)
            out += Key.userEnd
            HandJSON.string(end.ending.rawValue, to: &out)
            if let node = end.node {
                out += Key.node
                HandJSON.string(node, to: &out)
            }
            out += Key.attempts
            HandJSON.integer(end.attempts, to: &out)
            out += Key.reasons
            HandJSON.strings(end.reasons, to: &out)
            out += Key.close3
        }
    }

    /// An event's opening `key`, then its user and attempt (three of the four cases begin so).
    private static func writeUser(_ user: Int, attempt: Int, after key: [UInt8], to out: inout [UInt8]) {
        out += key
        HandJSON.integer(user, to: &out)
        out += Key.attemptValue
        HandJSON.integer(attempt, to: &out)
    }

    /// The user and attempt after an event's opening key, as ``writeUser(_:attempt:after:to:)`` writes them.
    private static func readUser(_ reader: inout HandJSON.Reader) -> (user: Int, attempt: Int)? {
        guard let user = reader.integer(), reader.literal(Key.attemptValue), let attempt = reader.integer() else { return nil }
        return (user, attempt)
    }

    private static func readEvent(_ reader: inout HandJSON.Reader) -> BikeJobBook.Event? {
        if reader.literal(Key.move) {
            guard let (user, attempt) = readUser(&reader), reader.literal(Key.step), let step = reader.integer(), reader.literal(Key.station), let station = reader.integer(),
                  reader.literal(Key.take), let take = reader.bool(), reader.literal(Key.close2) else { return nil }
            return .move(Move(user: user, attempt: attempt, step: step), station: station, take: take)
        }
        if reader.literal(Key.attempt) {
            guard let (user, attempt) = readUser(&reader), reader.literal(Key.close2) else { return nil }
            return .attempt(user: user, attempt: attempt)
        }
        if reader.literal(Key.accepted) {
            guard let (user, attempt) = readUser(&reader), reader.literal(Key.ending), let ending = reader.string().flatMap(SimulationResult.Ending.init(rawValue:)),
                  reader.literal(Key.close2) else { return nil }
            return .accepted(user: user, attempt: attempt, ending: ending)
        }
        if reader.literal(Key.ended) {
            guard let user = reader.integer(), reader.literal(Key.userEnd),
                  let ending = reader.string().flatMap(SimulationResult.Ending.init(rawValue:)) else { return nil }
            var node: String?
            if reader.literal(Key.node) {
                guard let named = reader.string() else { return nil }
                node = named
            }
            guard reader.literal(Key.attempts), let attempts = reader.integer(), reader.literal(Key.reasons), let reasons = reader.strings(),
                  reader.literal(Key.close3) else { return nil }
            return .ended(user: user, BikeJobBook.UserEnd(ending: ending, node: node, attempts: attempts, reasons: reasons))
        }
        return nil
    }

    /// The fixed text between the values.
    private enum Key {
        static let events = Array(#"{"events":"#.utf8)
        static let epochAfterEvents = Array(#","epoch":"#.utf8)
        static let attempt = Array(#"{"attempt":{"user":"#.utf8)
        static let attemptValue = Array(#","attempt":"#.utf8)
        static let move = Array(#"{"move":{"_0":{"user":"#.utf8)
        static let step = Array(#","step":"#.utf8)
        static let station = Array(#"},"station":"#.utf8)
        static let take = Array(#","take":"#.utf8)
        static let accepted = Array(#"{"accepted":{"user":"#.utf8)
        static let ending = Array(#","ending":"#.utf8)
        static let ended = Array(#"{"ended":{"user":"#.utf8)
        static let userEnd = Array(#","_1":{"ending":"#.utf8)
        static let node = Array(#","node":"#.utf8)
        static let attempts = Array(#","attempts":"#.utf8)
        static let reasons = Array(#","reasons":"#.utf8)
        static let close2 = Array("}}".utf8)
        static let close3 = Array("}}}".utf8)
    }
}
