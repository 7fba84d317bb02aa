import Foundation
import SpokesConcurrency
import SpokesTestKit
import Testing
@testable import SpokesCluster

@Suite struct LoggerTests {
    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (951_782_400.5, "2000-02-29T00:00:00.500Z"),
        (1_750_000_000.123, "2025-06-15T15:06:40.123Z"),
        (-0.001, "1969-12-31T23:59:59.999Z"),
        (4_107_542_399.999, "2100-02-28T23:59:59.999Z"),
        (-2_208_988_800, "1900-01-01T00:00:00.000Z"),
    ])
    func timesAreISO8601InUTC(seconds: Double, text: String) {
        #expect(UTCTime.iso8601(Date(timeIntervalSince1970: seconds), milliseconds: true) == text)
        #expect(UTCTime.iso8601(Date(timeIntervalSince1970: seconds)) == text.prefix(19) + "Z")
    }

    @Test func aLineIsTimeLevelLabelAndMessage() {
        let record = LogRecord(time: Date(timeIntervalSince1970: 1_750_000_000.123), level: .warning, label: "n1", message: "slow peer")
        #expect(record.line == "2025-06-15T15:06:40.123Z WARNING [n1] slow peer")
        let info = LogRecord(time: Date(timeIntervalSince1970: 0), level: .info, label: "n1", message: "up")
        #expect(info.line == "1970-01-01T00:00:00.000Z INFO    [n1] up")
    }

    @Test func recordsBelowTheMinimumLevelAreDroppedUnformatted() {
        let memory = LogMemory()
        var logger = memory.logger.labeled("n")
        logger.minimumLevel = .warning
        var formatted = 0
        logger.info({ formatted += 1; return "quiet" }())
        logger.error("loud")
        #expect(formatted == 0)
        #expect(memory.records.map(\.message) == ["loud"])
        #expect(memory.records.first?.label == "n")
    }

    @Test func linesGoToTheWriterTheyAreGiven() {
        let memory = LogMemory()
        let clock = Date(timeIntervalSince1970: 86_400)
        let logger = Logger(label: "x", clock: { clock }) { record in memory.logger.log(record.level, record.line) }
        logger.warning("careful")
        #expect(memory.messages == ["1970-01-02T00:00:00.000Z WARNING [x] careful"])
    }

    /// A node's records are dated on its runtime's clock: in the simulator, virtual time.
    @Test func aLoggerTimedByAClockDatesItsRecordsOnIt() {
        let memory = LogMemory()
        let clock = VirtualClock(now: 0)
        let logger = Logger(label: "v") { record in memory.logger.log(record.level, record.line) }.timed(by: clock)
        _ = clock.advance(by: 60)
        logger.info("a minute in")
        let second = UTCTime.iso8601(Date(timeIntervalSince1970: clock.unixNow)).prefix(19)  // to the second
        #expect(memory.messages.count == 1 && memory.messages[0].hasPrefix(second) && memory.messages[0].hasSuffix("[v] a minute in"),
                "\(memory.messages) at \(second)")
    }

    /// A node writes nowhere by itself: what it logs reaches the sink it was given,
    /// labelled with its name.
    @Test(.processLane) func aNodeLogsToTheSinkItIsGiven() async throws {
        let memory = LogMemory()
        var settings = ClusterSettings()
        settings.cluster = "blue"
        settings.nodeName = "logged"
        let node = try ClusterSystem(settings: settings, logger: memory.logger)
        defer { node.shutdown() }
        settings.cluster = "green"
        settings.nodeName = "stranger"
        let stranger = try ClusterSystem(settings: settings)
        defer { stranger.shutdown() }
        // Under the full suite's load a handshake can time out before the hello is read:
        // the stranger then dials again, as a node would.
        try await eventually("the refusal is logged", within: 15) {
            await #expect(throws: RemoteCallError.self) { try await stranger.join(node.address) }
            return memory.messages.contains { $0.contains("refused") }
        }
        let refusal = try #require(memory.records.first { $0.message.contains("refused") }, "\(memory.records)")
        #expect(refusal.label == "logged")
        #expect(refusal.message.contains("stranger") && refusal.message.contains("not 'green'"), "\(refusal.message)")
        node.log("by hand", level: .error)
        #expect(memory.records.last == LogRecord(time: memory.records.last!.time, level: .error, label: "logged", message: "by hand"))
    }
}
