import Foundation
import Testing
@testable import SpokesBikes

/// Seeded mutations of a real CityBikes file through the decoder: each decodes, or fails
/// with an error that says where (line and column for bad JSON, the JSON path for bad
/// content). Never a crash. Each round yields, so this CPU-bound loop never holds a
/// cooperative-pool thread for seconds while other tests wait for their timers.
@Suite struct CityBikesFuzzTests {
    @Test func mutatedNetworkFilesDecodeOrFailWithALocation() async throws {
        let sample = Array(try Data(contentsOf: URL(fileURLWithPath: TestData.milanoPath)))
        let lines = sample.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).count
        let alphabet = Array(" \n{}[]\",:.-0123456789enulltrfas\\".utf8) + [0xFF, 0xC3, 0x00]
        var generator = SeededGenerator(seed: 4231)
        var decoded = 0
        for _ in 0..<300 {
            await Task.yield()
            var bytes = sample
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes.insert(alphabet.randomElement(using: &generator)!, at: position)
                case 1: bytes.remove(at: position)
                case 2: bytes.removeSubrange(position...)
                default: bytes[position] = alphabet.randomElement(using: &generator)!
                }
                if bytes.isEmpty { bytes = [UInt8(ascii: "{")] }
            }
            do {
                _ = try Service<City>.data(Data(bytes), source: "fuzz.json")
                decoded += 1
            } catch {
                switch error {
                case .invalidJSON(let source, let line, let column, _):
                    #expect(source == "fuzz.json")
                    #expect((1...lines + 1).contains(line) && column >= 1, "\(error)")
                case .invalidContent(let source, let path, _):
                    #expect(source == "fuzz.json")
                    #expect(!path.isEmpty || error.description.contains("top level"), "\(error)")
                default:
                    Issue.record("unexpected \(error)")
                }
            }
        }
        #expect(decoded > 0 && decoded < 300)
    }
}
