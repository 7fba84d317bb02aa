import SpokesCluster
/// The node a job was submitted to would not run it, and why, in its words (never its
/// error's type): a kind no alive node runs, a parameter over its limits, a duplicate id.
public struct JobRefused: Error, Sendable, Hashable, CustomStringConvertible {
    public var node: String
    /// The refusing error's type on the node, e.g. `NoNodeRunsKind`.
    public var type: String
    public var reason: String

    public init(node: String, type: String, reason: String) {
        self.node = node
        self.type = type
        self.reason = reason
    }

    public var description: String { "\(node) refused the job: \(reason)" }
}
