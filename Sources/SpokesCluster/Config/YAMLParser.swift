/// Reads the small subset of YAML that configuration files need, and refuses the
/// rest with an error that says where and why, rather than guessing.
///
/// Supported: block mappings and sequences nested by space indentation (including
/// `- ` items at the same indent as their key), one-line flow sequences and flow
/// mappings of scalars (`[a, "b"]`, `{port: 8787, host: 127.0.0.1}`), plain, `'single'`
/// (`''` escapes a quote) and `"double"` (`\" \\ \n \t`) scalars, `#` comments, blank
/// lines and one optional leading `---`.
///
/// Sans-IO and total: any text either parses or throws ``YAMLError``; nesting is
/// capped at ``maximumDepth`` so that hostile input cannot exhaust the stack.
public struct YAMLParser: Sendable {
    /// Deepest nesting of mappings and sequences accepted.
    public static let maximumDepth = 64

    /// Parses `text`; `source` names it in errors (usually the file name).
    /// An empty document (only blanks and comments) is `.null` at 1:1.
    public static func parse(_ text: String, source: String) throws(YAMLError) -> YAMLValue {
        var parser = try YAMLParser(text, source: source)
        return try parser.document()
    }

    /// A line with content. `start` is the index of its first character of interest:
    /// its indentation at first, moved past a `- ` when that item's content is parsed
    /// as if it were a line of its own.
    private struct Line {
        var number: Int
        var start: Int
        var characters: [Unicode.Scalar]
    }

    private let source: String
    private var lines: [Line] = []
    private var index = 0
    private var firstLocation = YAMLLocation(line: 1, column: 1)

    private init(_ text: String, source: String) throws(YAMLError) {
        self.source = source
        var scalars = Array(text.unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        var sawMarker = false
        var number = 0
        for var characters in scalars.split(separator: "\n", omittingEmptySubsequences: false).map(Array.init) {
            number += 1
            if characters.last == "\r" { characters.removeLast() }
            var start = 0
            while start < characters.count, characters[start] == " " { start += 1 }
            let line = Line(number: number, start: start, characters: characters)
            if Self.isBlank(line, from: start) { continue }
            if characters[start] == "\t" {
                throw YAMLError(source: source, location: YAMLLocation(line: number, column: start + 1), reason: .tabIndentation)
            }
            if start == 0, characters[0] == "%" {
                throw YAMLError(source: source, location: YAMLLocation(line: number, column: 1), reason: .directive)
            }
            if start == 0, characters.starts(with: ["-", "-", "-"]), characters.count == 3 || Self.isSpace(characters[3]) {
                if sawMarker || !lines.isEmpty {
                    throw YAMLError(source: source, location: YAMLLocation(line: number, column: 1), reason: .multipleDocuments)
                }
                sawMarker = true
                guard Self.isBlank(line, from: 3) else {
                    throw YAMLError(source: source, location: YAMLLocation(line: number, column: 5), reason: .contentAfterDocumentMarker)
                }
                firstLocation = YAMLLocation(line: number + 1, column: 1)
                continue
            }
            lines.append(line)
        }
    }

    private mutating func document() throws(YAMLError) -> YAMLValue {
        guard !lines.isEmpty else { return .null(firstLocation) }
        let indent = lines[0].start
        let value = try node(depth: 1)
        if index < lines.count {
            let line = lines[index]
            throw error(line, line.start, line.start > indent ? .unexpectedIndentation : .unexpectedLine)
        }
        return value
    }

    /// Parses the node that starts at the current line's `start`, and everything
    /// indented under it.
    private mutating func node(depth: Int) throws(YAMLError) -> YAMLValue {
        let line = lines[index]
        guard depth <= Self.maximumDepth else {
            throw error(line, line.start, .nestingTooDeep(limit: Self.maximumDepth))
        }
        if Self.isSequenceItem(line, at: line.start) {
            return try sequence(indent: line.start, depth: depth)
        }
        if try key(of: line) != nil {
            return try mapping(indent: line.start, depth: depth)
        }
        let value = try inlineValue(line, at: line.start)
        index += 1
        return value
    }

    private mutating func mapping(indent: Int, depth: Int) throws(YAMLError) -> YAMLValue {
        var entries: [YAMLValue.Entry] = []
        var firstLines: [String: Int] = [:]
        while index < lines.count {
            let line = lines[index]
            if line.start < indent { break }
            if line.start > indent { throw error(line, line.start, .unexpectedIndentation) }
            if Self.isSequenceItem(line, at: line.start) { throw error(line, line.start, .sequenceItemInMapping) }
            guard let (key, colon) = try key(of: line) else { throw error(line, line.start, .missingColon) }
            let keyLocation = YAMLLocation(line: line.number, column: line.start + 1)
            if let firstLine = firstLines[key] {
                throw YAMLError(source: source, location: keyLocation, reason: .duplicateKey(key, firstLine: firstLine))
            }
            firstLines[key] = line.number
            let value: YAMLValue
            if Self.isBlank(line, from: colon + 1) {
                index += 1
                if index < lines.count, lines[index].start > indent {
                    value = try node(depth: depth + 1)
                } else if index < lines.count, lines[index].start == indent, Self.isSequenceItem(lines[index], at: indent) {
                    value = try sequence(indent: indent, depth: depth + 1)
                } else {
                    value = .null(YAMLLocation(line: line.number, column: colon + 2))
                }
            } else {
                let start = Self.skipSpaces(line, from: colon + 1)
                if Self.isSequenceItem(line, at: start) { throw error(line, start, .sequenceItemAfterKey) }
                value = try inlineValue(line, at: start)
                index += 1
            }
            entries.append(YAMLValue.Entry(key: key, value: value, keyLocation: keyLocation))
        }
        return .mapping(entries, entries.first?.keyLocation ?? YAMLLocation(line: 1, column: indent + 1))
    }

    private mutating func sequence(indent: Int, depth: Int) throws(YAMLError) -> YAMLValue {
        var items: [YAMLValue] = []
        let location = YAMLLocation(line: lines[index].number, column: indent + 1)
        while index < lines.count {
            let line = lines[index]
            if line.start < indent { break }
            if line.start > indent { throw error(line, line.start, .unexpectedIndentation) }
            guard Self.isSequenceItem(line, at: indent) else { break }
            if Self.isBlank(line, from: indent + 1) {
                index += 1
                if index < lines.count, lines[index].start > indent {
                    items.append(try node(depth: depth + 1))
                } else {
                    items.append(.null(YAMLLocation(line: line.number, column: indent + 2)))
                }
            } else {
                lines[index].start = Self.skipSpaces(line, from: indent + 1)
                items.append(try node(depth: depth + 1))
            }
        }
        return .sequence(items, location)
    }

    /// The key and the index of its `:` if the line (from `start`) is `key: …`; nil if it is some other node.
    private func key(of line: Line) throws(YAMLError) -> (String, Int)? {
        let characters = line.characters
        let start = line.start
        let first = characters[start]
        if first == "\"" || first == "'" {
            let (key, end) = try quoted(line, at: start)
            let colon = Self.skipSpaces(line, from: end)
            return Self.isMappingColon(line, at: colon) ? (key, colon) : nil
        }
        if first == "[" || first == "{" { return nil }
        try rejectIndicator(line, at: start)
        var position = start
        while position < characters.count {
            if Self.isMappingColon(line, at: position) {
                let key = Self.trimmed(line, start, position)
                if key.isEmpty { throw error(line, start, .emptyKey) }
                return (key, position)
            }
            if Self.isCommentStart(line, at: position) { return nil }
            position += 1
        }
        return nil
    }

    /// A scalar or flow collection that must be the rest of the line (bar a comment).
    private func inlineValue(_ line: Line, at start: Int) throws(YAMLError) -> YAMLValue {
        let characters = line.characters
        let location = YAMLLocation(line: line.number, column: start + 1)
        switch characters[start] {
        case "\"", "'":
            let (text, end) = try quoted(line, at: start)
            guard Self.isBlank(line, from: end) else { throw error(line, Self.skipSpaces(line, from: end), .trailingText(after: Character(characters[start]))) }
            return .scalar(text, location)
        case "[", "{":
            let (value, end) = try flowCollection(line, at: start)
            guard Self.isBlank(line, from: end) else {
                throw error(line, Self.skipSpaces(line, from: end), .trailingText(after: Character(characters[end - 1])))
            }
            return value
        default:
            try rejectIndicator(line, at: start)
            var end = start
            while end < characters.count, !Self.isCommentStart(line, at: end) {
                if Self.isMappingColon(line, at: end) { throw error(line, end, .colonInPlainValue) }
                end += 1
            }
            return Self.plain(Self.trimmed(line, start, end), location)
        }
    }

    /// A `[ ]` sequence or `{ }` mapping of scalars that starts at `open` and ends on the
    /// same line; returns it and the index after its closing bracket.
    private func flowCollection(_ line: Line, at open: Int) throws(YAMLError) -> (YAMLValue, Int) {
        let characters = line.characters
        let isMapping = characters[open] == "{"
        let close: Unicode.Scalar = isMapping ? "}" : "]"
        var items: [YAMLValue] = []
        var entries: [YAMLValue.Entry] = []
        var keyColumns: [String: Int] = [:]
        var expectingItem = true
        var position = open + 1
        while true {
            position = Self.skipSpaces(line, from: position)
            guard position < characters.count, !Self.isCommentStart(line, at: position) else {
                throw error(line, open, isMapping ? .unterminatedFlowMapping : .unterminatedFlowSequence)
            }
            let character = characters[position]
            if character == close { position += 1; break }
            if "[{".unicodeScalars.contains(character) { throw error(line, position, .nestedFlowCollection) }
            if !expectingItem {
                guard character == "," else { throw error(line, position, .trailingText(after: Character(characters[position - 1]))) }
                expectingItem = true
                position += 1
                continue
            }
            if character == "," { throw error(line, position, .emptyFlowItem) }
            let (item, end) = try flowScalar(line, at: position, inMapping: isMapping)
            position = end
            if isMapping {
                guard case .scalar(let key, _) = item, !key.isEmpty else { throw error(line, item.location.column - 1, .emptyKey) }
                let colon = Self.skipSpaces(line, from: position)
                guard colon < characters.count, characters[colon] == ":" else { throw error(line, min(colon, characters.count - 1), .missingColon) }
                let keyLocation = YAMLLocation(line: line.number, column: item.location.column)
                if let first = keyColumns[key] {
                    throw YAMLError(source: source, location: keyLocation, reason: .duplicateKey(key, firstLine: line.number, firstColumn: first))
                }
                keyColumns[key] = keyLocation.column
                let start = Self.skipSpaces(line, from: colon + 1)
                let value: YAMLValue
                if start < characters.count, ",}".unicodeScalars.contains(characters[start]) {
                    value = .null(YAMLLocation(line: line.number, column: start + 1))
                    position = start
                } else if start < characters.count, "[{".unicodeScalars.contains(characters[start]) {
                    throw error(line, start, .nestedFlowCollection)
                } else if start < characters.count, !Self.isCommentStart(line, at: start) {
                    (value, position) = try flowScalar(line, at: start, inMapping: true, isValue: true)
                } else {
                    throw error(line, open, .unterminatedFlowMapping)
                }
                entries.append(YAMLValue.Entry(key: key, value: value, keyLocation: keyLocation))
            } else {
                items.append(item)
            }
            expectingItem = false
        }
        let location = YAMLLocation(line: line.number, column: open + 1)
        return (isMapping ? .mapping(entries, location) : .sequence(items, location), position)
    }

    /// A quoted or plain scalar inside a flow collection; returns it and the index after it.
    /// A plain scalar ends at `,`, a bracket, or a comment; in a mapping a key also ends
    /// at its `:`, and in a sequence a `key: ` is refused.
    private func flowScalar(_ line: Line, at start: Int, inMapping: Bool, isValue: Bool = false) throws(YAMLError) -> (YAMLValue, Int) {
        let characters = line.characters
        let location = YAMLLocation(line: line.number, column: start + 1)
        if characters[start] == "\"" || characters[start] == "'" {
            let (text, end) = try quoted(line, at: start)
            return (.scalar(text, location), end)
        }
        try rejectIndicator(line, at: start)
        var end = start
        while end < characters.count, !"[]{},".unicodeScalars.contains(characters[end]), !Self.isCommentStart(line, at: end) {
            if characters[end] == ":", end + 1 == characters.count || Self.isSpace(characters[end + 1]) || ",]}".unicodeScalars.contains(characters[end + 1]) {
                if !inMapping { throw error(line, start, .pairInFlowSequence) }
                if isValue { throw error(line, end, .colonInPlainValue) }
                break
            }
            end += 1
        }
        return (Self.plain(Self.trimmed(line, start, end), location), end)
    }

    /// A single- or double-quoted scalar starting at `open`; returns its text and the index after the closing quote.
    private func quoted(_ line: Line, at open: Int) throws(YAMLError) -> (String, Int) {
        let characters = line.characters
        let quote = characters[open]
        var text = String.UnicodeScalarView()
        var position = open + 1
        while position < characters.count {
            let character = characters[position]
            if quote == "'" {
                if character == "'" {
                    guard position + 1 < characters.count, characters[position + 1] == "'" else {
                        return (String(text), position + 1)
                    }
                    position += 1
                }
            } else if character == "\"" {
                return (String(text), position + 1)
            } else if character == "\\" {
                guard position + 1 < characters.count else { break }
                switch characters[position + 1] {
                case "\"": text.append("\"")
                case "\\": text.append("\\")
                case "n": text.append("\n")
                case "t": text.append("\t")
                default: throw error(line, position, .invalidEscape(Character(characters[position + 1])))
                }
                position += 2
                continue
            }
            text.append(character)
            position += 1
        }
        throw error(line, open, .unterminatedString(quote: Character(quote)))
    }

    /// Throws the matching error if a plain node would start with a YAML indicator this subset does not support.
    private func rejectIndicator(_ line: Line, at position: Int) throws(YAMLError) {
        let character = line.characters[position]
        let followedBySpace = position + 1 == line.characters.count || Self.isSpace(line.characters[position + 1])
        let reason: YAMLError.Reason? = switch character {
        case "&": .anchor
        case "*": .alias
        case "!": .tag
        case "|", ">": .blockScalar
        case "%": .directive
        case "?" where followedBySpace: .complexKey
        case "@", "`", "]", "}", ",": .reservedIndicator(Character(character))
        default: nil
        }
        if let reason { throw error(line, position, reason) }
    }

    private func error(_ line: Line, _ position: Int, _ reason: YAMLError.Reason) -> YAMLError {
        YAMLError(source: source, location: YAMLLocation(line: line.number, column: position + 1), reason: reason)
    }

    private static func plain(_ text: String, _ location: YAMLLocation) -> YAMLValue {
        ["~", "null", "Null", "NULL"].contains(text) ? .null(location) : .scalar(text, location)
    }

    private static func isSpace(_ character: Unicode.Scalar) -> Bool {
        character == " " || character == "\t"
    }

    /// `#` starts a comment only at the start of the line or after whitespace.
    private static func isCommentStart(_ line: Line, at position: Int) -> Bool {
        line.characters[position] == "#" && (position == 0 || isSpace(line.characters[position - 1]))
    }

    /// A `:` followed by whitespace or the end of the line separates a key from its value.
    private static func isMappingColon(_ line: Line, at position: Int) -> Bool {
        let characters = line.characters
        return position < characters.count && characters[position] == ":"
            && (position + 1 == characters.count || isSpace(characters[position + 1]))
    }

    private static func isSequenceItem(_ line: Line, at position: Int) -> Bool {
        let characters = line.characters
        return position < characters.count && characters[position] == "-"
            && (position + 1 == characters.count || isSpace(characters[position + 1]))
    }

    private static func skipSpaces(_ line: Line, from position: Int) -> Int {
        var position = position
        while position < line.characters.count, isSpace(line.characters[position]) { position += 1 }
        return position
    }

    /// Nothing but whitespace and perhaps a comment from `position` on.
    private static func isBlank(_ line: Line, from position: Int) -> Bool {
        let position = skipSpaces(line, from: position)
        return position == line.characters.count || isCommentStart(line, at: position)
    }

    private static func trimmed(_ line: Line, _ start: Int, _ end: Int) -> String {
        var end = end
        while end > start, isSpace(line.characters[end - 1]) { end -= 1 }
        return String(String.UnicodeScalarView(line.characters[start..<end]))
    }
}
