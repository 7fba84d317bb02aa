extension StringProtocol {
    /// Without the whitespace (newlines included) at either end, as `Character.isWhitespace`
    /// says: what Foundation's `trimmingCharacters(in: .whitespacesAndNewlines)` gives, here
    /// without linking Foundation (see ``Swift/String/init(printf:_:)``).
    public func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }

    /// Exactly `width` characters: cut to them, or filled with spaces at the end (what
    /// Foundation's `padding(toLength: width, withPad: " ", startingAt: 0)` gives for
    /// text of single-unit characters).
    public func padded(to width: Int) -> String {
        let kept = prefix(Swift.max(width, 0))
        return String(kept) + String(repeating: " ", count: Swift.max(width, 0) - kept.count)
    }
}
