import Foundation
import Testing
@testable import SpokesCluster

/// A kind that declares nothing beyond its name: every default.
struct PlainKind: TaskKind {
    static let name = "test.plain"
    func run(_ input: Int, context: TaskContext) async throws -> Int { input }
}

/// A kind whose cost depends on its input, with a version of its own.
struct ChoosyKind: TaskKind {
    static let name = "test.choosy"
    static let version = "2"
    static var cost: TaskCost { .waiting }
    struct Input: Codable, Sendable { var sleeps: Bool }
    func cost(of input: Input) -> TaskCost { input.sleeps ? .waiting : .cpu }
    func run(_ input: Input, context: TaskContext) async throws -> Bool { input.sleeps }
}

enum SampleError: Error {
    case tooLarge(limit: Int)
    case plain
}

enum DescribedError: Error, CustomStringConvertible {
    case tooManySamples(Int)
    case empty
    var description: String {
        switch self {
        case .tooManySamples(let count): "samples must be at most 10, got \(count)"
        case .empty: "nothing to do"
        }
    }
}

struct Oops: Error { var code: Int }

struct Explained: LocalizedError { var errorDescription: String? { "explained in words" } }

struct TaskKindTests {
    @Test func aKindDeclaresVersionOneAndCpuCostUnlessItSaysOtherwise() {
        #expect(PlainKind.version == "1")
        #expect(PlainKind.cost == .cpu)
        #expect(PlainKind().cost(of: 3) == .cpu)
        #expect(ChoosyKind.version == "2")
        #expect(ChoosyKind().cost(of: .init(sleeps: true)) == .waiting)
        #expect(ChoosyKind().cost(of: .init(sleeps: false)) == .cpu)
    }

    @Test func theSchemaFingerprintIsFixedByNameVersionAndTypeNames() {
        let schema = PlainKind.schema
        #expect(schema.name == "test.plain" && schema.version == "1")
        #expect(schema.fingerprint.count == 16 && schema.fingerprint.allSatisfy(\.isHexDigit))
        // Pinned: nodes built at different times must compute the same fingerprint.
        #expect(schema == TaskSchema(name: "test.plain", version: "1", input: "Swift.Int", output: "Swift.Int"))
        #expect(TaskSchema(name: "a", version: "1", input: "Swift.Int", output: "Swift.Int").fingerprint == "bd301ceafcd68cd3")
        let others = [
            TaskSchema(name: "test.plain", version: "2", input: "Swift.Int", output: "Swift.Int"),
            TaskSchema(name: "test.plain", version: "1", input: "Swift.Double", output: "Swift.Int"),
            TaskSchema(name: "test.plain", version: "1", input: "Swift.Int", output: "Swift.String"),
            TaskSchema(name: "test.plainer", version: "1", input: "Swift.Int", output: "Swift.Int"),
        ]
        #expect(Set(others.map(\.fingerprint) + [schema.fingerprint]).count == 5, "each part changes the fingerprint")
        #expect(ChoosyKind.schema.description.hasPrefix("test.choosy v2 ("))
    }

    /// The type names are `String(reflecting:)`'s, which releases before it was read
    /// straight from the runtime advertised: nested, generic and optional types too.
    @Test func theSchemasTypeNamesAreTheFullyQualifiedNamesOfEarlierReleases() {
        #expect(ChoosyKind.schema == TaskSchema(name: "test.choosy", version: "2", input: String(reflecting: ChoosyKind.Input.self), output: String(reflecting: Bool.self)))
        #expect(ChoosyKind.schema == TaskSchema(name: "test.choosy", version: "2", input: "SpokesClusterTests.ChoosyKind.Input", output: "Swift.Bool"))
        let dictionary = "Swift.Dictionary<Swift.String, Swift.Array<Swift.Int>>"
        #expect(String(reflecting: [String: [Int]].self) == dictionary)
        #expect(EchoKind.schema == TaskSchema(name: "test.echo", version: "1", input: dictionary, output: dictionary))
        struct Nested: TaskKind {
            static let name = "test.nested"
            func run(_ input: [ChoosyKind.Input?], context: TaskContext) async throws -> Int { 0 }
        }
        #expect(Nested.schema == TaskSchema(name: "test.nested", version: "1", input: String(reflecting: [ChoosyKind.Input?].self), output: "Swift.Int"))
    }

    @Test func aThrownErrorReadsAsItsTypeCaseAndMessage() {
        func reads(_ error: any Error) -> String { TaskError(kind: "k", thrown: error).description }
        #expect(reads(DescribedError.tooManySamples(20)) == "DescribedError.tooManySamples: samples must be at most 10, got 20")
        #expect(reads(SampleError.tooLarge(limit: 5)) == "SampleError.tooLarge (limit: 5)")
        #expect(reads(SampleError.plain) == "SampleError.plain")
        #expect(reads(DescribedError.empty) == "DescribedError: nothing to do", "a described case without values has no name to show")
        #expect(reads(Oops(code: 3)) == "Oops (code: 3)")
        #expect(reads(Explained()) == "Explained: explained in words")
        #expect(TaskError(kind: "k", thrown: SampleError.plain) == .kindFailed(kind: "k", type: "SampleError.plain", message: ""))
    }

    @Test func aKindsErrorFromAnotherNodeReadsAsItDoesLocally() {
        for error in [SampleError.tooLarge(limit: 5), SampleError.plain, DescribedError.tooManySamples(20), Oops(code: 3)] as [any Error] {
            let local = TaskError(kind: "k", thrown: error)
            let remote = RemoteCallError.remoteError(type: "TaskError", message: local.description, node: "w1")
            #expect(FailureReason.describe(remote, deadline: 1) == local.description, "a report shows the words, not 'w1 failed with TaskError'")
            #expect(FailureReason.describe(local, deadline: 1) == local.description)
        }
    }

    @Test func theClustersOwnErrorsPassUnwrapped() {
        let refusal = OutOfRange(name: "seconds", value: "-1", expected: "0 to 3600")
        #expect(TaskError.passingOwn(refusal, kind: "k") as? OutOfRange == refusal, "so the node counts the refusal")
        #expect(TaskError.passingOwn(CancellationError(), kind: "k") is CancellationError)
        #expect(TaskError.passingOwn(TaskError.unknownKind("x"), kind: "k") as? TaskError == .unknownKind("x"))
        #expect(TaskError.passingOwn(SampleError.plain, kind: "k") as? TaskError == .kindFailed(kind: "k", type: "SampleError.plain", message: ""))
    }

    @Test func taskDataMayTakeAQuarterOfAFrameLessTheEnvelope() {
        #expect(TaskLimits.maximumDataBytes(frameBytes: 8 * 1024 * 1024) == 2_096_896)
        #expect(TaskLimits.maximumDataBytes(frameBytes: 65_536) == 16_128)
        #expect(TaskLimits.maximumDataBytes(frameBytes: 1024) == 128)
    }

    /// The worst case: every byte of the data is one the frame escapes twice (`"`), in
    /// a call with long names (a kind's longest, a long node name) and in a reply; each
    /// frame still fits. The smallest frames leave room for short names only.
    @Test(arguments: [(1024, 16), (65_536, 100), (8 * 1024 * 1024, 100)])
    func theLargestAllowedInputOrOutputFitsItsFrame(frameBytes: Int, names: Int) throws {
        let limit = TaskLimits.maximumDataBytes(frameBytes: frameBytes)
        let worst = String(repeating: "\"", count: limit)
        let encoder = JSONEncoder()
        let request = TaskRequest(job: JobIdentifier.make("batch"), task: Int.max, attempt: Int.max, kind: String(repeating: "k", count: names), input: worst)
        let call = WireMessage.call(.init(
            id: .max, recipient: ActorID(node: NodeID(name: String(repeating: "n", count: names), incarnation: .max), name: ScanSystem.wellKnownName),
            target: "$s13SpokesCluster10ScanSystemC3runyAA10TaskResultOAA0E7RequestVYaKFTE", genericSubstitutions: [],
            arguments: [String(decoding: try encoder.encode(request), as: UTF8.self)]))
        let result = String(decoding: try encoder.encode(TaskResult.done(output: worst)), as: UTF8.self)
        let reply = WireMessage.reply(.init(id: .max, outcome: .value(result)))
        // Room for the authentication tag a sealed frame carries.
        let room = frameBytes - 64
        #expect(try encoder.encode(call).count <= room)
        #expect(try encoder.encode(reply).count <= room)
    }
}
