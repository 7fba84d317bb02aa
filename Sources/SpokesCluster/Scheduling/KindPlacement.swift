/// Which workers may run a job's tasks: the nodes that run its kind at the version the
/// submitter has (issue 20 §3), a pure decision over what each node advertises.
///
/// Nodes built from different programs run different kinds, and two builds may run a kind
/// of one name at different versions (``TaskSchema``: the name, version and a fingerprint
/// of its input and output types). Tasks of a job go only to nodes whose schema of the
/// kind equals the job's, so outputs of two versions are never mixed in one job. The
/// job's schema is the submitter's when it runs the kind itself; otherwise the one most
/// of the asked nodes run (ties to the first node by name, so every coordinator decides
/// alike).
public struct KindPlacement: Sendable, Hashable {
    /// What one node said it runs; nil when it could not be asked (it is then left out).
    public struct Offer: Sendable, Hashable {
        public var node: String
        public var schemas: [TaskSchema]?

        public init(node: String, schemas: [TaskSchema]?) {
            self.node = node
            self.schemas = schemas
        }
    }

    /// The schema the job's tasks run at.
    public let schema: TaskSchema
    /// The nodes that run it, by name.
    public let nodes: Set<String>

    /// Decides where tasks of `kind` may go among `offers`, at `submitter`'s schema when
    /// the submitter runs the kind (`submitter` is its schema of `kind`, nil when it does
    /// not run it). Throws ``NoNodeRunsKind`` naming the kind and every
    /// node asked when none runs it (at that version).
    public init(kind: String, submitter: TaskSchema?, offers: [Offer]) throws(NoNodeRunsKind) {
        let sorted = offers.sorted { $0.node < $1.node }
        let running = sorted.compactMap { offer in
            offer.schemas?.first { $0.name == kind }.map { (node: offer.node, schema: $0) }
        }
        let chosen = submitter ?? Self.mostCommon(running.map(\.schema))
        let matching = running.filter { $0.schema == chosen }
        guard let schema = chosen, !matching.isEmpty else {
            throw NoNodeRunsKind(
                kind: kind, wanted: chosen, asked: sorted.map(\.node),
                unreachable: sorted.filter { $0.schemas == nil }.map(\.node),
                otherVersions: running.filter { $0.schema != chosen }.map { "\($0.node) (\($0.schema))" })
        }
        self.schema = schema
        self.nodes = Set(matching.map(\.node))
    }

    /// The schema that occurs most often, the first of equals.
    private static func mostCommon(_ schemas: [TaskSchema]) -> TaskSchema? {
        var counts: [TaskSchema: Int] = [:]
        for schema in schemas { counts[schema, default: 0] += 1 }
        var best: TaskSchema?
        for schema in schemas where best.map({ counts[schema]! > counts[$0]! }) ?? true { best = schema }
        return best
    }
}

/// A job whose kind no alive node runs (at the wanted version): it fails at once.
public struct NoNodeRunsKind: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    public var kind: String
    /// The version the submitter runs, when it runs the kind.
    public var wanted: TaskSchema?
    /// Every node asked, by name.
    public var asked: [String]
    /// Nodes that could not be asked what they run.
    public var unreachable: [String]
    /// Nodes that run the kind at another version: `n2 (pi.sample v2 (…))`.
    public var otherVersions: [String]

    public var description: String {
        var text = "no alive node runs task kind '\(kind)'\(wanted.map { " at \($0)" } ?? "") (asked \(asked.isEmpty ? "none" : asked.joined(separator: ", ")))"
        if !otherVersions.isEmpty { text += "; another version runs on \(otherVersions.joined(separator: ", "))" }
        if !unreachable.isEmpty { text += "; could not ask \(unreachable.joined(separator: ", "))" }
        return text + "; start nodes of a program that registers it"
    }
}
