/// Why a text is not a document of the YAML subset ``YAMLParser`` reads, and where.
///
/// `description` is the one-line message for people: `cluster.yaml:7:3: duplicate key 'port' (first at line 4)`.
public struct YAMLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong. Each message says what to do instead where there is an alternative.
    public enum Reason: Sendable, Hashable {
        case tabIndentation
        case anchor
        case alias
        case tag
        case blockScalar
        case pairInFlowSequence
        case complexKey
        case directive
        case reservedIndicator(Character)
        /// `firstColumn` is set when both are on one line (a flow mapping).
        case duplicateKey(String, firstLine: Int, firstColumn: Int? = nil)
        case multipleDocuments
        case unterminatedString(quote: Character)
        case invalidEscape(Character)
        case trailingText(after: Character)
        case contentAfterDocumentMarker
        case unterminatedFlowSequence
        case unterminatedFlowMapping
        case emptyFlowItem
        case nestedFlowCollection
        case emptyKey
        case colonInPlainValue
        case sequenceItemAfterKey
        case sequenceItemInMapping
        case unexpectedIndentation
        case missingColon
        case unexpectedLine
        case nestingTooDeep(limit: Int)

        var message: String {
            switch self {
            case .tabIndentation: "tabs are not allowed for indentation; indent with spaces"
            case .anchor: "anchors ('&') are not supported; repeat the value instead"
            case .alias: "aliases ('*') are not supported; repeat the value instead"
            case .tag: "tags ('!') are not supported; quote the value if '!' is part of it"
            case .blockScalar: "block scalars ('|', '>') are not supported; write the value on one line, quoted if needed"
            case .pairInFlowSequence: "'key: value' inside '[ ]' is not supported; use '{key: value}' or a block mapping"
            case .complexKey: "complex keys ('? ') are not supported; use 'key: value'"
            case .directive: "directives ('%') are not supported; remove the line"
            case .reservedIndicator(let character): "'\(character)' cannot start a plain value; quote the value"
            case .duplicateKey(let key, let firstLine, let firstColumn):
                "duplicate key '\(key)' (first at line \(firstLine)\(firstColumn.map { ", column \($0)" } ?? ""))"
            case .multipleDocuments: "only one document is supported; remove the second '---' and what follows or split the file"
            case .unterminatedString(let quote): "missing closing \(quote) (quoted values must end on the same line)"
            case .invalidEscape(let character): "unsupported escape '\\\(character)'; use \\\", \\\\, \\n or \\t"
            case .trailingText(let character): "unexpected text after '\(character)'; a comment needs a space before '#'"
            case .contentAfterDocumentMarker: "nothing but a comment may follow '---'; start the document on the next line"
            case .unterminatedFlowSequence: "missing ']' (a '[ ]' list must end on the same line)"
            case .unterminatedFlowMapping: "missing '}' (a '{ }' mapping must end on the same line)"
            case .emptyFlowItem: "empty item in a '[ ]' list or '{ }' mapping"
            case .nestedFlowCollection: "'[ ]' and '{ }' may only hold plain or quoted values"
            case .emptyKey: "empty key before ':'"
            case .colonInPlainValue: "': ' inside a plain value; quote the value or nest it on the next lines"
            case .sequenceItemAfterKey: "a '- ' item cannot follow 'key:' on the same line; put it on the next line"
            case .sequenceItemInMapping: "a '- ' item where a 'key: value' was expected"
            case .unexpectedIndentation: "unexpected indentation; only a 'key:' or '- ' with nothing after it may have indented lines below it"
            case .missingColon: "expected 'key: value'"
            case .unexpectedLine: "this line does not continue the structure above it; check its indentation"
            case .nestingTooDeep(let limit): "nesting deeper than \(limit) levels is not supported"
            }
        }
    }

    /// The file name (or other label) the text came from, as given to the parser.
    public var source: String
    public var location: YAMLLocation
    public var reason: Reason

    public init(source: String, location: YAMLLocation, reason: Reason) {
        self.source = source
        self.location = location
        self.reason = reason
    }

    public var description: String { "\(source):\(location): \(reason.message)" }
}
