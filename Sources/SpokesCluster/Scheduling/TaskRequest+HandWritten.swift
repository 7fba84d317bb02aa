/// A task attempt and its answer as JSON by hand (issue 33 §1): every attempt of every
/// task is one call to a worker's ``ScanSystem/run(_:)``, and `JSONEncoder` and
/// `JSONDecoder` writing and reading its request and its result were about 8% of the CPU
/// of a cluster running no-op tasks.
///
/// The form is `Codable`'s with the keys in one order,
/// `{"job":"j","task":3,"attempt":1,"kind":"k","input":"{}","cost":"cpu","share":{"owner":"o","priority":5,"maxSlots":2},"readyAgo":0.25}`
/// (`share`, `maxSlots` and `readyAgo` only when set), which `JSONDecoder` (an earlier release's
/// worker) reads as the same request; ``init(handWrittenJSON:)`` reads only that form,
/// and anything else (an earlier release's `JSONEncoder`, keys in its own order) is left
/// to `JSONDecoder`, with its errors.
extension TaskRequest: HandWrittenArgument {
    public var handWrittenJSON: [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(96 + job.utf8.count + kind.utf8.count + input.utf8.count * 5 / 4 + (share?.owner.utf8.count ?? 0))
        out += Literal.job
        HandJSON.string(job, to: &out)
        out += Literal.task
        HandJSON.integer(task, to: &out)
        out += Literal.attempt
        HandJSON.integer(attempt, to: &out)
        out += Literal.kind
        HandJSON.string(kind, to: &out)
        out += Literal.input
        HandJSON.string(input, to: &out)
        out += Literal.cost
        HandJSON.string(cost.rawValue, to: &out)
        if let share {
            out += Literal.owner
            HandJSON.string(share.owner, to: &out)
            out += Literal.priority
            HandJSON.integer(share.priority, to: &out)
            if let maxSlots = share.maxSlots {
                out += Literal.maxSlots
                HandJSON.integer(maxSlots, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        if let readyAgo {
            out += Literal.readyAgo
            // Not a number JSON has (never sent: the runner measures a finite one):
            // left to `JSONEncoder`, which throws.
            guard HandJSON.double(readyAgo, to: &out) else { return nil }
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    public init?(handWrittenJSON bytes: ArraySlice<UInt8>) {
        var reader = HandJSON.Reader(bytes: bytes)
        guard reader.literal(Literal.job), let job = reader.string(), reader.literal(Literal.task), let task = reader.integer(),
              reader.literal(Literal.attempt), let attempt = reader.integer(), reader.literal(Literal.kind), let kind = reader.string(),
              reader.literal(Literal.input), let input = reader.string(), reader.literal(Literal.cost), let costName = reader.string(),
              let cost = TaskCost(rawValue: costName)
        else { return nil }
        var share: JobShare?
        if reader.literal(Literal.owner) {
            guard let owner = reader.string(), reader.literal(Literal.priority), let priority = reader.integer() else { return nil }
            var maxSlots: Int?
            if reader.literal(Literal.maxSlots) {
                guard let slots = reader.integer() else { return nil }
                maxSlots = slots
            }
            guard reader.byte(UInt8(ascii: "}")) else { return nil }
            share = JobShare(owner: owner, priority: priority, maxSlots: maxSlots)
        }
        var readyAgo: Double?
        if reader.literal(Literal.readyAgo) {
            guard let seconds = reader.double() else { return nil }
            readyAgo = seconds
        }
        guard reader.byte(UInt8(ascii: "}")), reader.atEnd else { return nil }
        self.init(job: job, task: task, attempt: attempt, kind: kind, input: input, cost: cost, share: share, readyAgo: readyAgo)
    }

    private enum Literal {
        static let job = Array(#"{"job":"#.utf8)
        static let task = Array(#","task":"#.utf8)
        static let attempt = Array(#","attempt":"#.utf8)
        static let kind = Array(#","kind":"#.utf8)
        static let input = Array(#","input":"#.utf8)
        static let cost = Array(#","cost":"#.utf8)
        static let owner = Array(#","share":{"owner":"#.utf8)
        static let priority = Array(#","priority":"#.utf8)
        static let maxSlots = Array(#","maxSlots":"#.utf8)
        static let readyAgo = Array(#","readyAgo":"#.utf8)
    }
}

/// A worker's answer by hand, in `Codable`'s form: `{"done":{"output":"..."}}` or
/// `{"busy":{}}`.
extension TaskResult: HandWrittenArgument {
    public var handWrittenJSON: [UInt8]? {
        switch self {
        case .busy:
            return Literal.busy
        case .done(let output):
            var out: [UInt8] = []
            out.reserveCapacity(Literal.done.count + 2 + output.utf8.count * 5 / 4)
            out += Literal.done
            HandJSON.string(output, to: &out)
            out += Literal.close
            return out
        }
    }

    public init?(handWrittenJSON bytes: ArraySlice<UInt8>) {
        var reader = HandJSON.Reader(bytes: bytes)
        if reader.literal(Literal.busy) {
            guard reader.atEnd else { return nil }
            self = .busy
            return
        }
        guard reader.literal(Literal.done), let output = reader.string(), reader.literal(Literal.close), reader.atEnd else { return nil }
        self = .done(output: output)
    }

    private enum Literal {
        static let busy = Array(#"{"busy":{}}"#.utf8)
        static let done = Array(#"{"done":{"output":"#.utf8)
        static let close = Array("}}".utf8)
    }
}
