import Foundation
import Testing
@testable import SpokesCluster

/// A task's whole-number input and output by hand (`bench.noop`'s), pure: the output is
/// the text the encoder with sorted keys writes, byte for byte, and an input is read as
/// `JSONDecoder` reads it, or left to it.
@Suite struct TaskOutputTextTests {
    static let numbers = [0, 1, -1, 9, 10, -10, 42, 1_000_000, Int.max, Int.min, Int.max - 1, Int.min + 1]

    @Test func aWholeNumbersOutputIsTheSortedEncodersTextByteForByte() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for number in Self.numbers {
            #expect(try TaskRegistry.outputText(number) == Array(try encoder.encode(number)), "\(number)")
        }
        // Anything else still goes through the encoder: its keys sorted.
        #expect(String(decoding: try TaskRegistry.outputText(["b": 1, "a": 2]), as: UTF8.self) == #"{"a":2,"b":1}"#)
    }

    @Test func aWholeNumberReadByHandIsWhatJSONDecoderReads() throws {
        for number in Self.numbers {
            let bytes = Array(String(number).utf8)
            #expect(Int(handWrittenJSON: bytes[...]) == number)
            #expect(try JSONDecoder().decode(Int.self, from: Data(bytes)) == number)
        }
    }

    @Test func aNumberOffTheHandFormIsLeftToJSONDecoder() {
        for text in ["-0", "01", " 1", "1 ", "1.0", "1e2", "+1", "", "-", "9223372036854775808", "-9223372036854775809", "\"1\"", "[1]"] {
            #expect(Int(handWrittenJSON: Array(text.utf8)[...]) == nil, "\(text)")
        }
    }
}
