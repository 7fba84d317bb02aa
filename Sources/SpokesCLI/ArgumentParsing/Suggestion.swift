/// Finds the known name closest to a mistyped one, for "did you mean" hints.
enum Suggestion {
    /// The candidate within edit distance 2 (or a third of the name's length, if larger)
    /// of `name`, closest first; nil when none is that close.
    static func nearest(to name: String, among candidates: [String]) -> String? {
        let limit = max(2, name.count / 3)
        return candidates
            .map { ($0, distance(name, $0)) }
            .filter { $0.1 <= limit }
            .min { $0.1 < $1.1 }?.0
    }

    /// Levenshtein distance: insertions, deletions and substitutions.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
