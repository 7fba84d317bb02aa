import SpokesTestKit
import Testing
@testable import SpokesCluster

/// Parses `text` as `t.yaml` and renders the result compactly: `{key:value}`, `[item]`,
/// `"scalar"`, `null`, so that structure can be compared in one line.
private func shape(_ text: String) throws -> String {
    render(try YAMLParser.parse(text, source: "t.yaml"))
}

private func render(_ value: YAMLValue) -> String {
    switch value {
    case .scalar(let text, _): "\"\(text)\""
    case .null: "null"
    case .sequence(let items, _): "[" + items.map(render).joined(separator: ",") + "]"
    case .mapping(let entries, _): "{" + entries.map { "\($0.key):\(render($0.value))" }.joined(separator: ",") + "}"
    }
}

/// The error message for `text`, or nil if it parses.
private func failure(_ text: String) -> String? {
    do {
        _ = try YAMLParser.parse(text, source: "t.yaml")
        return nil
    } catch {
        return error.description
    }
}

@Suite struct YAMLParserTests {
    @Test func nestedMappingsKeepKeyOrder() throws {
        let text = """
            zeta: 1
            node:
              port: 80
              host: a
            alpha: x
            """
        #expect(try shape(text) == #"{zeta:"1",node:{port:"80",host:"a"},alpha:"x"}"#)
    }

    @Test func valuesAndKeysCarryTheirLineAndColumn() throws {
        let value = try YAMLParser.parse("a: 1\nnode:\n  port:   80  # c\n  list:\n  - x\n", source: "t.yaml")
        guard case .mapping(let entries, let location) = value, case .mapping(let node, _) = entries[1].value else {
            Issue.record("not nested mappings: \(value)")
            return
        }
        #expect(location == YAMLLocation(line: 1, column: 1))
        #expect(entries[1].keyLocation == YAMLLocation(line: 2, column: 1))
        #expect(node[0].keyLocation == YAMLLocation(line: 3, column: 3))
        #expect(node[0].value == .scalar("80", YAMLLocation(line: 3, column: 11)))
        #expect(node[1].value == .sequence([.scalar("x", YAMLLocation(line: 5, column: 5))], YAMLLocation(line: 5, column: 3)))
    }

    @Test func blockSequencesMayBeIndentedOrAtTheIndentOfTheirKey() throws {
        #expect(try shape("seeds:\n  - a\n  - b\nx: 1") == #"{seeds:["a","b"],x:"1"}"#)
        #expect(try shape("seeds:\n- a\n- b\nx: 1") == #"{seeds:["a","b"],x:"1"}"#)
        #expect(try shape("- a\n- b") == #"["a","b"]"#)
    }

    @Test func sequenceItemsMayHoldMappingsAndSequences() throws {
        #expect(try shape("- a: 1\n  b: 2\n- - x\n  - y\n-\n  c: 3\n-") == #"[{a:"1",b:"2"},["x","y"],{c:"3"},null]"#)
    }

    @Test func flowSequencesHoldPlainAndQuotedScalars() throws {
        #expect(try shape(#"seeds: [a:1, "b:2", 'c, d' ,e]"#) == #"{seeds:["a:1","b:2","c, d","e"]}"#)
        #expect(try shape("seeds: []  # none") == "{seeds:[]}")
        #expect(try shape("seeds: [ a, ]") == #"{seeds:["a"]}"#)
    }

    @Test func flowMappingsHoldScalarsWithTheirLocations() throws {
        #expect(try shape("dashboard: {port: 8787, host: '127.0.0.1'}") == #"{dashboard:{port:"8787",host:"127.0.0.1"}}"#)
        #expect(try shape("a: {}  # none") == "{a:{}}")
        #expect(try shape("a: { b: , c: ~ , }") == "{a:{b:null,c:null}}")
        #expect(try shape("{a: 1, \"b c\": 'd, e', u: http://x:80/}") == #"{a:"1",b c:"d, e",u:"http://x:80/"}"#)
        #expect(try shape("- {a: 1}\n- [x, y]") == #"[{a:"1"},["x","y"]]"#)
        let value = try YAMLParser.parse("dashboard: {port: 8787,  host: h}", source: "t.yaml")
        guard case .mapping(let entries, let location) = value["dashboard"] else {
            Issue.record("not a mapping: \(value)")
            return
        }
        #expect(location == YAMLLocation(line: 1, column: 12))
        #expect(entries.map(\.keyLocation) == [YAMLLocation(line: 1, column: 13), YAMLLocation(line: 1, column: 26)])
        #expect(entries.map(\.value) == [.scalar("8787", YAMLLocation(line: 1, column: 19)), .scalar("h", YAMLLocation(line: 1, column: 32))])
    }

    @Test func quotedScalarsUnescape() throws {
        #expect(try shape(#"a: 'it''s # not a comment'"#) == #"{a:"it's # not a comment"}"#)
        let value = try YAMLParser.parse(#"b: "say \"hi\"\\\n\t#x""#, source: "t.yaml")
        #expect(value["b"] == .scalar("say \"hi\"\\\n\t#x", YAMLLocation(line: 1, column: 4)))
        #expect(try shape("'quoted: key': v\n\"k #2\" : w") == #"{quoted: key:"v",k #2:"w"}"#)
    }

    @Test func commentsNeedWhitespaceBeforeTheHash() throws {
        #expect(try shape("# top\na: b#c # comment\n  # indented comment\n\nd: 'e' # after quote") == #"{a:"b#c",d:"e"}"#)
    }

    @Test func plainScalarsKeepInnerSpacesAndColons() throws {
        #expect(try shape("url: http://x:80/a b  \ntime: 12:30") == #"{url:"http://x:80/a b",time:"12:30"}"#)
    }

    @Test func emptyValuesAreNullAtTheColumnAfterTheColon() throws {
        let value = try YAMLParser.parse("a:\nb: ~\nc: null\nd: ''", source: "t.yaml")
        #expect(value["a"] == .null(YAMLLocation(line: 1, column: 3)))
        #expect(value["b"] == .null(YAMLLocation(line: 2, column: 4)))
        #expect(value["c"] == .null(YAMLLocation(line: 3, column: 4)))
        #expect(value["d"] == .scalar("", YAMLLocation(line: 4, column: 4)))
    }

    @Test func oneLeadingDocumentMarkerIsAllowed() throws {
        #expect(try shape("# c\n---  # start\na: 1") == #"{a:"1"}"#)
    }

    @Test func emptyDocumentsAreNull() throws {
        #expect(try YAMLParser.parse("", source: "t.yaml") == .null(YAMLLocation(line: 1, column: 1)))
        #expect(try YAMLParser.parse("# only\n\n   \n", source: "t.yaml") == .null(YAMLLocation(line: 1, column: 1)))
    }

    @Test func windowsLineEndingsAndAByteOrderMarkAreAccepted() throws {
        #expect(try shape("\u{FEFF}a: 1\r\nb:\r\n  - x\r\n") == #"{a:"1",b:["x"]}"#)
    }

    @Test func duplicateKeysNameTheKeyAndBothLines() {
        #expect(failure("a: 1\nnode:\n  port: 1\n\n  host: h\n  port: 2") == "t.yaml:6:3: duplicate key 'port' (first at line 3)")
    }

    @Test(arguments: [
        ("a:\n\tb: 1", "t.yaml:2:1: tabs are not allowed for indentation; indent with spaces"),
        ("a: &x 1", "t.yaml:1:4: anchors ('&') are not supported; repeat the value instead"),
        ("a: *x", "t.yaml:1:4: aliases ('*') are not supported; repeat the value instead"),
        ("a: !!str 1", "t.yaml:1:4: tags ('!') are not supported; quote the value if '!' is part of it"),
        ("a: |\n  text", "t.yaml:1:4: block scalars ('|', '>') are not supported; write the value on one line, quoted if needed"),
        ("a: >\n  text", "t.yaml:1:4: block scalars ('|', '>') are not supported; write the value on one line, quoted if needed"),
        ("a: 1\n---\nb: 2", "t.yaml:2:1: only one document is supported; remove the second '---' and what follows or split the file"),
        ("---\n---", "t.yaml:2:1: only one document is supported; remove the second '---' and what follows or split the file"),
        ("--- a: 1", "t.yaml:1:5: nothing but a comment may follow '---'; start the document on the next line"),
        ("? a\n: b", "t.yaml:1:1: complex keys ('? ') are not supported; use 'key: value'"),
        ("%YAML 1.2\n---\na: 1", "t.yaml:1:1: directives ('%') are not supported; remove the line"),
    ])
    func unsupportedFeaturesAreRefusedWithTheirLocation(text: String, message: String) {
        #expect(failure(text) == message)
    }

    @Test(arguments: [
        ("a: \"open", "t.yaml:1:4: missing closing \" (quoted values must end on the same line)"),
        ("a: 'open\n  more'", "t.yaml:1:4: missing closing ' (quoted values must end on the same line)"),
        (#"a: "\x""#, #"t.yaml:1:5: unsupported escape '\x'; use \", \\, \n or \t"#),
        ("a: 'b' c", "t.yaml:1:8: unexpected text after '''; a comment needs a space before '#'"),
        ("a: [b, c", "t.yaml:1:4: missing ']' (a '[ ]' list must end on the same line)"),
        ("a: [b,\n  c]", "t.yaml:1:4: missing ']' (a '[ ]' list must end on the same line)"),
        ("a: [b, # c]", "t.yaml:1:4: missing ']' (a '[ ]' list must end on the same line)"),
        ("a: [b,,c]", "t.yaml:1:7: empty item in a '[ ]' list or '{ }' mapping"),
        ("a: [[b]]", "t.yaml:1:5: '[ ]' and '{ }' may only hold plain or quoted values"),
        ("a: [b: 1]", "t.yaml:1:5: 'key: value' inside '[ ]' is not supported; use '{key: value}' or a block mapping"),
        ("a: {b: 1", "t.yaml:1:4: missing '}' (a '{ }' mapping must end on the same line)"),
        ("a: {b: 1,\n  c: 2}", "t.yaml:1:4: missing '}' (a '{ }' mapping must end on the same line)"),
        ("a: {b: # c}", "t.yaml:1:4: missing '}' (a '{ }' mapping must end on the same line)"),
        ("a: {b}", "t.yaml:1:6: expected 'key: value'"),
        ("a: {: 1}", "t.yaml:1:5: empty key before ':'"),
        ("a: {b: 1, b: 2}", "t.yaml:1:11: duplicate key 'b' (first at line 1, column 5)"),
        ("a: {b: [1]}", "t.yaml:1:8: '[ ]' and '{ }' may only hold plain or quoted values"),
        ("a: [{b: 1}]", "t.yaml:1:5: '[ ]' and '{ }' may only hold plain or quoted values"),
        ("a: {b: c: d}", "t.yaml:1:9: ': ' inside a plain value; quote the value or nest it on the next lines"),
        ("a: {b: 1,, c: 2}", "t.yaml:1:10: empty item in a '[ ]' list or '{ }' mapping"),
        ("a: {b: 1} c", "t.yaml:1:11: unexpected text after '}'; a comment needs a space before '#'"),
        ("a: {b: 1]", "t.yaml:1:9: unexpected text after '1'; a comment needs a space before '#'"),
        ("a: [b] c", "t.yaml:1:8: unexpected text after ']'; a comment needs a space before '#'"),
        ("a: 1\n: 2", "t.yaml:2:1: empty key before ':'"),
        ("a: b: c", "t.yaml:1:5: ': ' inside a plain value; quote the value or nest it on the next lines"),
        ("a: - b", "t.yaml:1:4: a '- ' item cannot follow 'key:' on the same line; put it on the next line"),
        ("a: 1\n- b", "t.yaml:2:1: a '- ' item where a 'key: value' was expected"),
        ("a: 1\n  b: 2", "t.yaml:2:3: unexpected indentation; only a 'key:' or '- ' with nothing after it may have indented lines below it"),
        ("a:\n    b: 1\n  c: 2", "t.yaml:3:3: unexpected indentation; only a 'key:' or '- ' with nothing after it may have indented lines below it"),
        ("a: 1\nplain", "t.yaml:2:1: expected 'key: value'"),
        ("- a\nb: 1", "t.yaml:2:1: this line does not continue the structure above it; check its indentation"),
        ("a: ]", "t.yaml:1:4: ']' cannot start a plain value; quote the value"),
    ])
    func malformedTextIsRefusedWithTheProblemAndItsLocation(text: String, message: String) {
        #expect(failure(text) == message)
    }

    @Test func deepNestingIsRefusedInsteadOfExhaustingTheStack() {
        let limit = YAMLParser.maximumDepth
        #expect(failure(String(repeating: "- ", count: 100_000) + "x") == "t.yaml:1:\(2 * limit + 1): nesting deeper than \(limit) levels is not supported")
        #expect(failure(String(repeating: "- ", count: limit - 1) + "x") == nil)
    }

    /// 2,000 seeded mutations of a realistic file: each must parse or throw a
    /// `YAMLError` that points inside the text, without crashing or hanging.
    @Test func randomMutationsEitherParseOrFailInsideTheText() {
        let original = Array("""
            # cluster
            ---
            cluster: spokes
            node:
              name: "n\\t1"   # quoted
              port: 0
            seeds: [a:1, "b:2", 'c''d']
            dashboard: {port: 8787, host: "h"}
            list:
            - x
            - k: v
              j: [ ]
            heartbeat:
              interval: 0.2
            """.unicodeScalars)
        let alphabet = Array(" \t\n\r-:#'\"\\[]{},&*!|>?%@`~.ax0".unicodeScalars)
        var generator = TestGenerator(seed: 2026)
        var parsed = 0
        for _ in 0..<2_000 {
            var text = original
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                let position = Int.random(in: 0...text.count, using: &generator)
                let character = alphabet.randomElement(using: &generator)!
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: text.insert(character, at: position)
                case 1 where position < text.count: text.remove(at: position)
                default: if position < text.count { text[position] = character }
                }
            }
            let string = String(String.UnicodeScalarView(text))
            let lineCount = text.split(separator: "\n", omittingEmptySubsequences: false).count
            do {
                _ = try YAMLParser.parse(string, source: "fuzz.yaml")
                parsed += 1
            } catch {
                #expect(error.source == "fuzz.yaml")
                #expect((1...lineCount).contains(error.location.line), "\(error) in \(string.debugDescription)")
                #expect(error.location.column >= 1, "\(error)")
            }
        }
        #expect(parsed > 0 && parsed < 2_000)
    }
}
