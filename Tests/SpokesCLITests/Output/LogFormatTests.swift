import Foundation
import SpokesCluster
import Synchronization
import Testing
@testable import SpokesCLI

/// `spokes node --log-format`: the log as people read it, or one JSON object a line.
@Suite struct LogFormatTests {
    static let record = LogRecord(time: Date(timeIntervalSince1970: 1_795_000_000.25), level: .warning, label: "n1",
                                  message: "cannot join 198.51.100.7:7000: \"refused\"\nsecond line \\ ü")

    @Test func jsonIsOneObjectALineWithTheRecordsTimeLevelNodeAndMessage() throws {
        let line = LogFormat.json(Self.record)
        #expect(!line.contains("\n"), "a message's line feeds are escaped")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object == ["time": "2026-11-18T11:06:40.250Z", "level": "warning", "node": "n1", "message": Self.record.message])
        #expect(line.hasPrefix(#"{"level":"warning","message":"#), "keys in a fixed order")
    }

    @Test func eachFormatsLoggerWritesOneLineARecord() {
        let written = Mutex<[String]>([])
        for format in LogFormat.allCases {
            format.logger { text in written.withLock { $0.append(text) } }.labeled("n1").log(.info, "listening")
        }
        let lines = written.withLock { $0 }
        #expect(lines.count == 2 && lines.allSatisfy { $0.hasSuffix("\n") && $0.filter { $0 == "\n" }.count == 1 })
        #expect(lines[0].hasSuffix(" INFO    [n1] listening\n"))
        #expect(lines[1].hasPrefix(#"{"level":"info","message":"listening","node":"n1","time":""#))
    }

    @Test func anUnknownFormatIsAUsageErrorNamingTheFlag() async {
        let run = await CommandRun.spokes("node", "--log-format", "xml")
        #expect(run.status == 2)
        #expect(run.standardError.contains("--log-format must be text or json, got 'xml'"))
        #expect(run.standardOutput.isEmpty, "no node started")
    }
}
