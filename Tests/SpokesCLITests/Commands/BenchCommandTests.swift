import Foundation
import Testing
@testable import SpokesCLI

/// The benchmark's measurements: a failed one fails its figure, never meets a target.
@Suite struct BenchCommandTests {
    func encoded(_ figure: BenchCommand.Figure) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(figure)) as? [String: Any])
    }

    @Test func residentMemoryThatCannotBeReadIsNoValueNotZero() throws {
        #expect((Bench.residentBytes(pid: getpid()) ?? 0) > 1_000_000, "this process has a resident size")
        let proc = FileManager.default.temporaryDirectory.appendingPathComponent("spokes-proc-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: proc) }
        try FileManager.default.createDirectory(atPath: proc + "/42", withIntermediateDirectories: true)
        #expect(Bench.residentBytes(pid: 41, proc: proc) == nil, "no status file")
        try Data("Name:\tspokes\nVmRSS:\t       0 kB\n".utf8).write(to: URL(fileURLWithPath: proc + "/42/status"))
        #expect(Bench.residentBytes(pid: 42, proc: proc) == nil, "a zero size is no measurement")
        try Data("Name:\tspokes\n".utf8).write(to: URL(fileURLWithPath: proc + "/42/status"))
        #expect(Bench.residentBytes(pid: 42, proc: proc) == nil, "no VmRSS line")
    }

    @Test func aMemoryFigureWithAnUnreadNodeFailsAndCarriesNoValue() throws {
        let failed = try encoded(Bench.memoryFigure([(pid: 7, bytes: 25_000_000), (pid: 8, bytes: nil)]))
        #expect(failed["figure"] as? String == "memory")
        #expect(failed["worker_bytes"] == nil && failed["head_bytes"] == nil)
        #expect(failed["error"] as? String == "cannot read VmRSS from /proc/8/status")
        let measured = try encoded(Bench.memoryFigure([(pid: 7, bytes: 25_000_000), (pid: 8, bytes: 24_000_000)]))
        #expect(measured["worker_bytes"] as? Double == 24_000_000 && measured["head_bytes"] as? Double == 25_000_000)
        #expect(measured["error"] == nil)
    }

    @Test func aFailedFigureSaysSoInItsText() throws {
        let figure = BenchCommand.Figure.failed("recovery", what: "recovery", error: "no task started again after the kill")
        #expect(figure.text == "recovery: FAILED, no task started again after the kill")
        #expect(try encoded(figure)["seconds"] == nil)
    }
}
