import SpokesTestKit
import Foundation
import Testing
@testable import SpokesCluster

/// `test.count`: returns a string of `input` characters; refuses negative counts in
/// `validate`, throws for counts over 1,000.
struct CountKind: TaskKind {
    static let name = "test.count"
    enum Refusal: Error, CustomStringConvertible {
        case negative(Int)
        var description: String {
            switch self {
            case .negative(let count): "count must be 0 or more, got \(count)"
            }
        }
    }
    func validate(_ input: Int) throws {
        if input < 0 { throw Refusal.negative(input) }
    }
    func run(_ input: Int, context: TaskContext) async throws -> String {
        if input > 1_000 { throw SampleError.tooLarge(limit: 1_000) }
        return String(repeating: "x", count: input)
    }
}

/// `test.echo`: returns its input.
struct EchoKind: TaskKind {
    static let name = "test.echo"
    func run(_ input: [String: [Int]], context: TaskContext) async throws -> [String: [Int]] { input }
}

/// `test.wait-for-cancel`: waits until it is cancelled, then throws (or returns after
/// 10 s, so a cancellation that never comes fails the test instead of hanging it).
struct WaitForCancelKind: TaskKind {
    static let name = "test.wait-for-cancel"
    func run(_ input: Int, context: TaskContext) async throws -> Int {
        try await Task.sleep(for: .seconds(10))
        return input
    }
}

/// `test.spin`: computes until cancelled.
struct SpinKind: TaskKind {
    static let name = "test.spin"
    func run(_ input: Int, context: TaskContext) async throws -> Int {
        try await context.compute { isCancelled in
            while !isCancelled() {}
            throw CancellationError()
        }
    }
}

@Suite(.processLane, .timeLimit(.minutes(1)))
struct TaskRegistryTests {
    /// A registry of the test kinds, run on a system whose frames are `frameBytes` long.
    func withRegistry(frameBytes: Int = 8 * 1024 * 1024, _ body: (TaskRegistry, TaskContext) async throws -> Void) async throws {
        let cluster = try TestSystems(1) { settings, _ in settings.maximumFrameSize = frameBytes }
        defer { cluster.shutdown() }
        let registry = TaskRegistry(kinds: [CountKind(), EchoKind(), ChoosyKind(), WaitForCancelKind(), SpinKind()])
        try await body(registry, TaskContext(system: cluster.systems[0], job: "job-1", task: 0, attempt: 1))
    }

    func request(_ kind: String, _ input: String) -> TaskRequest {
        TaskRequest(job: "job-1", task: 0, attempt: 1, kind: kind, input: input)
    }

    func failure(of registry: TaskRegistry, _ kind: String, _ input: String, context: TaskContext) async -> (any Error)? {
        do {
            _ = try await registry.run(request(kind, input), context: context)
            return nil
        } catch {
            return error
        }
    }

    @Test func aRegistryHasTheBuiltInKindsAndThoseItIsGiven() async throws {
        try await withRegistry { registry, context in
            #expect(registry.kinds == ["bench.noop", "bench.sleep", "test.choosy", "test.count", "test.echo", "test.spin", "test.wait-for-cancel"])
            #expect(registry.schemas.map(\.name) == registry.kinds)
            #expect(registry.schema(of: "test.choosy") == ChoosyKind.schema)
            #expect(registry.schema(of: "nope") == nil)
            let output = try await registry.run(request("test.count", "3"), context: context)
            #expect(output == "\"xxx\"")
        }
    }

    @Test func anOutputPrintsWithSortedKeys() async throws {
        try await withRegistry { registry, context in
            let output = try await registry.run(request("test.echo", #"{"b": [1], "a": [2], "c": []}"#), context: context)
            #expect(output == #"{"a":[2],"b":[1],"c":[]}"#)
        }
    }

    @Test func costComesFromTheKindForEachInput() async throws {
        try await withRegistry { registry, _ in
            #expect(registry.cost(kind: "test.choosy", input: #"{"sleeps": false}"#) == .cpu)
            #expect(registry.cost(kind: "test.choosy", input: #"{"sleeps": true}"#) == .waiting)
            #expect(registry.cost(kind: "test.choosy", input: "not json") == .waiting, "an input that does not decode costs what the kind declares")
            #expect(registry.cost(kind: "test.count", input: "1") == .cpu)
            #expect(registry.cost(kind: "nope", input: "1") == nil)
        }
    }

    @Test func anInputThatDoesNotDecodeSaysWhichFieldIsWrong() async throws {
        try await withRegistry { registry, context in
            let missing = await failure(of: registry, "test.choosy", "{}", context: context)
            #expect(missing as? TaskError == .invalidInput(kind: "test.choosy", reason: "missing field 'sleeps'"))
            let wrong = await failure(of: registry, "test.choosy", #"{"sleeps": 3}"#, context: context)
            #expect("\(wrong!)".hasPrefix("invalid input for test.choosy: expected Bool at sleeps"), "\(wrong!)")
            let broken = await failure(of: registry, "test.count", "{", context: context)
            #expect("\(broken!)".hasPrefix("invalid input for test.count: not valid JSON"), "\(broken!)")
        }
    }

    @Test func theKindsValidationRefusesAnInputBeforeItRuns() async throws {
        try await withRegistry { registry, context in
            let error = await failure(of: registry, "test.count", "-2", context: context)
            #expect(error as? TaskError == .invalidInput(kind: "test.count", reason: "Refusal.negative: count must be 0 or more, got -2"))
            #expect(throws: TaskError.invalidInput(kind: "test.count", reason: "Refusal.negative: count must be 0 or more, got -2")) {
                try registry.check(kind: "test.count", input: "-2", settings: context.system.settings)
            }
            try registry.check(kind: "test.count", input: "2", settings: context.system.settings)
            #expect(throws: TaskError.unknownKind("nope")) { try registry.check(kind: "nope", input: "2", settings: context.system.settings) }
        }
    }

    @Test func anErrorTheKindThrowsComesBackWithItsTypeAndMessage() async throws {
        try await withRegistry { registry, context in
            let error = await failure(of: registry, "test.count", "1001", context: context)
            #expect(error as? TaskError == .kindFailed(kind: "test.count", type: "SampleError.tooLarge", message: " (limit: 1000)"))
            #expect("\(error!)" == "SampleError.tooLarge (limit: 1000)")
        }
    }

    @Test func anInputOverTheLimitIsRefusedNamingTheLimit() async throws {
        // 4 KiB frames: inputs and outputs of at most 768 bytes.
        try await withRegistry(frameBytes: 4_096) { registry, context in
            let text = String(repeating: "1", count: 769)
            let error = await failure(of: registry, "test.count", text, context: context)
            #expect(error as? TaskError == .inputTooLarge(kind: "test.count", bytes: 769, limit: 768))
            #expect("\(error!)".contains("limits.max_frame_bytes"))
        }
    }

    @Test func anOutputOverTheLimitFailsTheAttemptInsteadOfTheConnection() async throws {
        try await withRegistry(frameBytes: 4_096) { registry, context in
            let output = try await registry.run(request("test.count", "766"), context: context)
            #expect(output.utf8.count == 768)
            let error = await failure(of: registry, "test.count", "800", context: context)
            #expect(error as? TaskError == .outputTooLarge(kind: "test.count", bytes: 802, limit: 768))
        }
    }

    @Test func anInputNestedTooDeeplyIsRefusedBeforeDecoding() async throws {
        try await withRegistry { registry, context in
            let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
            let error = await failure(of: registry, "test.echo", deep, context: context)
            #expect("\(error!)".hasPrefix("invalid input for test.echo:") && "\(error!)".contains("32"), "\(error!)")
        }
    }

    @Test func cancellingTheCallerReachesTheKindsFunction() async throws {
        try await withRegistry { registry, context in
            let running = Task { try await registry.run(request("test.wait-for-cancel", "1"), context: context) }
            running.cancel()
            await #expect(throws: CancellationError.self) { try await running.value }
        }
    }

    @Test func computingKindsLeaveTheCooperativePoolFreeAndSeeCancellation() async throws {
        try await withRegistry { registry, context in
            // More spinners than the pool has threads: were they on the pool, nothing else
            // could run until they stop, and a 10 ms sleep would not end. A watchdog on a
            // thread of its own cancels them after 5 s, so a broken build fails, not hangs.
            let spinners = (0...ProcessInfo.processInfo.activeProcessorCount).map { _ in
                Task { try await registry.run(request("test.spin", "1"), context: context) }
            }
            let watchdog = Thread {
                Thread.sleep(forTimeInterval: 5)
                for spinner in spinners { spinner.cancel() }
            }
            watchdog.start()
            let clock = ContinuousClock()
            let start = clock.now
            try await Task.sleep(for: .milliseconds(10))
            #expect(clock.now - start < .seconds(4), "a sleep waited for the computing tasks")
            for spinner in spinners { spinner.cancel() }
            for spinner in spinners { await #expect(throws: CancellationError.self) { try await spinner.value } }
        }
    }

    @Test func kindsWithBadOrSharedNamesAreRefusedTogether() {
        struct Spaced: TaskKind {
            static let name = "has space"
            func run(_ input: Int, context: TaskContext) async throws -> Int { input }
        }
        struct BadVersion: TaskKind {
            static let name = "ok.name"
            static let version = ""
            func run(_ input: Int, context: TaskContext) async throws -> Int { input }
        }
        #expect(throws: TaskKindError.invalidName("has space")) { try TaskRegistry.validate([Spaced()]) }
        #expect(throws: TaskKindError.invalidVersion(kind: "ok.name", version: "")) { try TaskRegistry.validate([BadVersion()]) }
        #expect(throws: TaskKindError.duplicateName("bench.noop")) { try TaskRegistry.validate(TaskRegistry.builtInKinds + [NoopTask()]) }
        #expect(throws: Never.self) { try TaskRegistry.validate(TaskRegistry.builtInKinds + [PlainKind(), ChoosyKind()]) }
    }
}
