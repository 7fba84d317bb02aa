/// A kind of task a node can run, registered by name: typed input and output, both
/// Codable so they travel as JSON.
///
/// ```swift
/// struct Square: TaskKind {
///     static let name = "math.square"
///     func run(_ input: Int, context: TaskContext) async throws -> Int { input * input }
/// }
/// registry.register(Square())
/// ```
public protocol TaskKind: Sendable {
    associatedtype Input: Codable & Sendable
    associatedtype Output: Codable & Sendable
    /// The name tasks are submitted under, e.g. `bikes.user`.
    static var name: String { get }
    func run(_ input: Input, context: TaskContext) async throws -> Output
}

/// What a running task knows about where and why it runs.
public struct TaskContext: Sendable {
    /// The node running the task.
    public let system: ClusterSystem
    public let job: String
    public let task: Int
    public let attempt: Int
}
