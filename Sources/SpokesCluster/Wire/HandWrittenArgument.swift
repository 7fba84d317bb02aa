/// A distributed call's argument written and read by hand (issue 33 §1): the invocation
/// encoder takes ``handWrittenJSON`` where it is not nil, and the invocation decoder tries
/// ``init(handWrittenJSON:)`` first, leaving whatever it does not read to `JSONDecoder`.
///
/// The rule is ``WireCodec``'s: what ``handWrittenJSON`` writes, `JSONDecoder` reads as the
/// same value (a callee of an earlier release reads it so), and ``init(handWrittenJSON:)``
/// reads only that form, so a caller of an earlier release, whose `JSONEncoder` puts keys
/// in its own order, is read by `JSONDecoder` as before. For the arguments of the calls
/// every node makes many times a second: Raft's messages (`[RaftEnvelope]`), a bike job's
/// batches of station moves (`[StationMove]`), through ``HandWrittenElements``.
public protocol HandWrittenArgument: Codable {
    /// The value's JSON, or nil to leave it to `JSONEncoder`.
    var handWrittenJSON: [UInt8]? { get }

    /// The value in exactly the form ``handWrittenJSON`` writes; nil for anything else.
    init?(handWrittenJSON bytes: ArraySlice<UInt8>)
}

/// A string argument (a replica's name beside Raft's messages, a group's, a job's) as a
/// JSON string by hand (``HandJSON``), read back by hand: `JSONEncoder` and
/// `JSONDecoder` were most of the cost of the calls that carry one.
extension String: HandWrittenArgument {
    public var handWrittenJSON: [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count + 2)
        HandJSON.string(self, to: &bytes)
        return bytes
    }

    public init?(handWrittenJSON bytes: ArraySlice<UInt8>) {
        var reader = HandJSON.Reader(bytes: bytes)
        guard let text = reader.string(), reader.atEnd else { return nil }
        self = text
    }
}

/// A type whose arrays are written and read by hand: `[Element]` is then a
/// ``HandWrittenArgument``. One conformance of `Array` serves every such element (Swift
/// allows `Array` one conformance to a protocol), so each workload brings its own: the
/// replication layer Raft's envelopes, the bike workload its station moves.
public protocol HandWrittenElements: Codable {
    /// The JSON of `elements` in the rule of ``HandWrittenArgument``, or nil to leave the
    /// whole array to `JSONEncoder`.
    static func handWrittenJSON(of elements: [Self]) -> [UInt8]?

    /// The elements in exactly the form ``handWrittenJSON(of:)`` writes; nil otherwise.
    static func elements(handWrittenJSON bytes: ArraySlice<UInt8>) -> [Self]?
}

extension Array: HandWrittenArgument where Element: HandWrittenElements {
    public var handWrittenJSON: [UInt8]? { Element.handWrittenJSON(of: self) }

    public init?(handWrittenJSON bytes: ArraySlice<UInt8>) {
        guard let elements = Element.elements(handWrittenJSON: bytes) else { return nil }
        self = elements
    }
}

/// A whole number (a `bench.noop` task's input and output, a count among a call's
/// arguments) in decimal by hand: the text `JSONEncoder` writes for it, byte for byte, so
/// a task kind's output reads the same from a node of any release.
extension Int: HandWrittenArgument {
    public var handWrittenJSON: [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        HandJSON.integer(self, to: &bytes)
        return bytes
    }

    public init?(handWrittenJSON bytes: ArraySlice<UInt8>) {
        var reader = HandJSON.Reader(bytes: bytes)
        guard let value = reader.integer(), reader.atEnd else { return nil }
        self = value
    }
}
