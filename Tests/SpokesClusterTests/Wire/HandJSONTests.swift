import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// The hand reader's strings against `JSONDecoder`'s: what it reads is what `JSONDecoder`
/// reads, and what `JSONDecoder` refuses it refuses (runs between escapes are copied
/// whole, ASCII ones without a UTF-8 check).
@Suite struct HandJSONTests {
    /// JSON string literals (quotes included) as raw bytes: escapes between runs of ASCII
    /// and of other UTF-8, bytes that are not UTF-8 before, between and after escapes,
    /// raw control characters, an unfinished string.
    static let literals: [[UInt8]] = [
        Array(#""plain""#.utf8), Array(#""""#.utf8), Array(#""a\nb\tc\"d\\e\/f""#.utf8),
        Array(#""\n""#.utf8), Array(#""\u00e9t\u00e9 \ud83d\udeb2""#.utf8), Array("\"é\\n漢字\\t🚲\"".utf8),
        Array("\"ascii then \\\" then é\"".utf8), Array(#""{\"beacon\":{\"node\":\"n1\",\"port\":7946}}""#.utf8),
        [0x22, 0xFF, 0x22], [0x22, 0x61, 0x5C, 0x6E, 0xFF, 0x22], [0x22, 0x5C, 0x6E, 0xC3, 0x22], [0x22, 0xC3, 0xA9, 0x5C, 0x6E, 0xC3, 0x28, 0x22],
        [0x22, 0x61, 0x0A, 0x22], [0x22, 0x5C, 0x6E, 0x01, 0x22], Array(#""\ud800""#.utf8), Array(#""\x""#.utf8),
        Array(#""unfinished"#.utf8), Array(#""unfinished\n"#.utf8), Array(#""ends in \"#.utf8),
    ]

    /// What the writer gives, spelled the simplest way: each character escaped alone.
    static func escapedByEachCharacter(_ text: String) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case ..<0x20: out += Array(String(format: "\\u%04x", Int(byte)).utf8)
            default: out.append(byte)
            }
        }
        return out + [UInt8(ascii: "\"")]
    }

    @Test func writesAStringThatJSONDecoderReadsBackAsItWas() throws {
        var texts = ["", "plain", "n1", #"{"beacon":{"node":"n1","port":7946}}"#, "é漢字🚲", "\\\"", "tab\tline\ncr\rend"]
        texts += (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        var random = TestGenerator(seed: 7)
        let alphabet: [Character] = ["a", "\"", "\\", "\n", "\u{01}", "\u{1F}", "é", "🚲", " ", "{", "}"]
        texts += (0..<200).map { _ in String((0..<Int(random.next() % 40)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }) }
        var inJSON = "plain"
        for _ in 0..<4 {
            var bytes: [UInt8] = []
            HandJSON.string(inJSON, to: &bytes)
            inJSON = #"{"arguments":["# + String(decoding: bytes, as: UTF8.self) + "]}"
            texts.append(inJSON)
        }
        for text in texts {
            var out: [UInt8] = Array("[".utf8)
            HandJSON.string(text, to: &out)
            #expect(Array(out.dropFirst()) == Self.escapedByEachCharacter(text), "\(text.debugDescription)")
            #expect(try JSONDecoder().decode(String.self, from: Data(out.dropFirst())) == text, "\(text.debugDescription)")
        }
    }

    @Test func readsAStringExactlyAsJSONDecoderDoes() throws {
        for literal in Self.literals {
            var reader = HandJSON.Reader(bytes: literal[...])
            let read = reader.string()
            let decoded = try? JSONDecoder().decode(String.self, from: Data(literal))
            #expect(read == decoded, "\(literal)")
            if read != nil { #expect(reader.atEnd, "\(literal): the whole literal read") }
        }
    }

    @Test func skipsAStringWhereItReadsOneAndNowhereElse() {
        for literal in Self.literals {
            var reading = HandJSON.Reader(bytes: literal[...])
            var skipping = HandJSON.Reader(bytes: literal[...])
            let read = reading.string() != nil
            #expect(skipping.skipString() == read, "\(literal)")
            if read { #expect(skipping.index == reading.index, "\(literal): it ends where the string does") }
        }
    }

    @Test func skipsAPlainNumberThatIsAFiniteJSONNumberAndNothingElse() throws {
        let plain = ["0", "-0", "7", "1800000000.25", "-12.5", "0.001", "123456789012345678901234567890.5"]
        let refused = ["", "-", "01", "1.", ".5", "1e5", "1E-3", "2.5e10", "+1", "--1", "0x10", "1234567890123456789012345678901234"]
        for text in plain + refused {
            var reader = HandJSON.Reader(bytes: Array(text.utf8)[...])
            let skipped = reader.skipPlainNumber() && reader.atEnd
            #expect(skipped == plain.contains(text), "\(text)")
            if skipped {
                let decoded = try JSONDecoder().decode(Double.self, from: Data(text.utf8))
                #expect(decoded.isFinite, "\(text)")
            }
        }
        for text in ["1e999", "2.5E-3"] {
            var reader = HandJSON.Reader(bytes: Array(text.utf8)[...])
            let skipped = reader.skipPlainNumber()
            #expect(!skipped, "\(text): a number with an exponent is not passed over (1e999 is no Double)")
        }
    }
}
