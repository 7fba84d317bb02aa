import SpokesCluster

/// `test.cube`: the cube of a number; refuses negative numbers before they are sent,
/// fails on 13 where it runs, and sleeps the number of milliseconds above 1000.
public struct CubeTask: TaskKind {
    public static let name = "test.cube"
    public struct Input: Codable, Sendable { public var number: Int; public init(number: Int) { self.number = number } }
    public struct Output: Codable, Sendable, Equatable { public var cube: Int; public var node: String }
    public struct Unlucky: Error, CustomStringConvertible { public var description: String { "13 is unlucky" } }
    public struct Negative: Error, CustomStringConvertible { public var description: String { "number must be 0 or more" } }

    public init() {}

    public func validate(_ input: Input) throws { if input.number < 0 { throw Negative() } }

    public func run(_ input: Input, context: TaskContext) async throws -> Output {
        if input.number == 13 { throw Unlucky() }
        // On the node's clock: virtual under a simulated runtime, real otherwise.
        if input.number > 1000 { try await context.system.runtime.sleep(for: Double(input.number - 1000) / 1000) }
        return Output(cube: input.number * input.number * input.number, node: context.system.node.name)
    }
}

