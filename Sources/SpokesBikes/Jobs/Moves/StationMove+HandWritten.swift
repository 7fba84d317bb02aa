import SpokesCluster

/// A batch of station moves as JSON by hand (issue 33 §1): every real-time bike user's
/// every move travels in one, to the coordinator's ``JobStationDesk``, and `JSONDecoder`
/// reading them was 7% of a busy coordinator's CPU. Their outcomes come back by hand too
/// (``StationMove/Outcome``).
///
/// The form is `Codable`'s with its keys in one order, `[{"station":3,"take":true,
/// "move":{"user":7,"attempt":1,"step":2}}]`, which `JSONDecoder` (an earlier release's
/// desk) reads as the same moves; ``elements(handWrittenJSON:)`` reads only that form, and
/// anything else (an earlier release's `JSONEncoder`, keys in its own order) is left to
/// `JSONDecoder`.
extension StationMove: HandWrittenElements {
    public static func handWrittenJSON(of elements: [StationMove]) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(2 + elements.count * 64)
        HandJSON.array(elements, to: &out) { element, out in
            out += Literal.station
            HandJSON.integer(element.station, to: &out)
            out += Literal.take
            HandJSON.bool(element.take, to: &out)
            out += Literal.user
            HandJSON.integer(element.move.user, to: &out)
            out += Literal.attempt
            HandJSON.integer(element.move.attempt, to: &out)
            out += Literal.step
            HandJSON.integer(element.move.step, to: &out)
            out += Literal.close
        }
        return out
    }

    public static func elements(handWrittenJSON bytes: ArraySlice<UInt8>) -> [StationMove]? {
        var reader = HandJSON.Reader(bytes: bytes)
        let elements: [StationMove]? = reader.array { reader in
            guard reader.literal(Literal.station), let station = reader.integer(), reader.literal(Literal.take), let take = reader.bool(),
                  reader.literal(Literal.user), let user = reader.integer(), reader.literal(Literal.attempt), let attempt = reader.integer(),
                  reader.literal(Literal.step), let step = reader.integer(), reader.literal(Literal.close)
            else { return nil }
            return StationMove(station: station, take: take, move: Move(user: user, attempt: attempt, step: step))
        }
        guard let elements, reader.atEnd else { return nil }
        return elements
    }

    private enum Literal {
        static let station = Array(#"{"station":"#.utf8)
        static let take = Array(#","take":"#.utf8)
        static let user = Array(#","move":{"user":"#.utf8)
        static let attempt = Array(#","attempt":"#.utf8)
        static let step = Array(#","step":"#.utf8)
        static let close = Array("}}".utf8)
    }
}

/// A batch's outcomes by hand, in `Codable`'s form (`[{"done":{"_0":true}}]`). A batch
/// with a refusal in it (rare: a fenced or unknown move) is left to `JSONEncoder` whole.
extension StationMove.Outcome: HandWrittenElements {
    public static func handWrittenJSON(of elements: [StationMove.Outcome]) -> [UInt8]? {
        guard !elements.contains(where: { if case .refused = $0 { true } else { false } }) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(2 + elements.count * 20)
        HandJSON.array(elements, to: &out) { element, out in
            out += element == .done(true) ? OutcomeLiteral.doneTrue : OutcomeLiteral.doneFalse
        }
        return out
    }

    public static func elements(handWrittenJSON bytes: ArraySlice<UInt8>) -> [StationMove.Outcome]? {
        var reader = HandJSON.Reader(bytes: bytes)
        let elements: [StationMove.Outcome]? = reader.array { reader in
            if reader.literal(OutcomeLiteral.doneTrue) { return .done(true) }
            if reader.literal(OutcomeLiteral.doneFalse) { return .done(false) }
            return nil
        }
        guard let elements, reader.atEnd else { return nil }
        return elements
    }

    private enum OutcomeLiteral {
        static let doneTrue = Array(#"{"done":{"_0":true}}"#.utf8)
        static let doneFalse = Array(#"{"done":{"_0":false}}"#.utf8)
    }
}
