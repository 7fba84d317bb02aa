/// A replica's log in memory: the position its snapshot covers, then the entries after
/// it, without gaps. Invariant: `entries[k].index == snapshot.index + 1 + k`, and terms
/// never decrease along the log.
struct RaftLog: Sendable, Hashable {
    private(set) var snapshot: RaftLogPosition
    private(set) var entries: [RaftEntry]

    init(snapshot: RaftLogPosition = RaftLogPosition(index: 0, term: 0), entries: [RaftEntry] = []) {
        self.snapshot = snapshot
        self.entries = entries
    }

    var lastIndex: Int { snapshot.index + entries.count }
    var lastTerm: Int { entries.last?.term ?? snapshot.term }
    var last: RaftLogPosition { RaftLogPosition(index: lastIndex, term: lastTerm) }

    /// The term of the entry at `index`, if the log still knows it (the snapshot's own
    /// index included).
    func term(at index: Int) -> Int? {
        if index == snapshot.index { return snapshot.term }
        guard index > snapshot.index, index <= lastIndex else { return nil }
        return entries[index - snapshot.index - 1].term
    }

    func entry(at index: Int) -> RaftEntry? {
        guard index > snapshot.index, index <= lastIndex else { return nil }
        return entries[index - snapshot.index - 1]
    }

    /// Entries from `start` through `end` (both held in the log).
    func entries(from start: Int, through end: Int) -> ArraySlice<RaftEntry> {
        guard start <= end else { return [] }
        return entries[(start - snapshot.index - 1)...(end - snapshot.index - 1)]
    }

    /// Entries from `start` on, at most `maxCount` of them and about `maxBytes` (at
    /// least one if any).
    func batch(from start: Int, maxCount: Int, maxBytes: Int) -> [RaftEntry] {
        guard start > snapshot.index, start <= lastIndex else { return [] }
        var batch: [RaftEntry] = []
        var bytes = 0
        var index = start
        while index <= lastIndex, batch.count < maxCount {
            let entry = entries[index - snapshot.index - 1]
            bytes += entry.approximateSize
            if !batch.isEmpty, bytes > maxBytes { break }
            batch.append(entry)
            index += 1
        }
        return batch
    }

    /// The first index of the run of entries with the term at `index`, not below the
    /// snapshot (the conflict hint of a refused AppendEntries).
    func firstIndex(ofTermAt index: Int) -> Int {
        guard let term = term(at: index) else { return lastIndex + 1 }
        var first = index
        while first - 1 > snapshot.index, self.term(at: first - 1) == term { first -= 1 }
        return first
    }

    /// The last index at or below `index` whose entry has `term`, if the log has one.
    func lastIndex(ofTerm term: Int, atOrBelow index: Int) -> Int? {
        var candidate = min(index, lastIndex)
        while candidate >= snapshot.index, let found = self.term(at: candidate), found >= term {
            if found == term { return candidate }
            candidate -= 1
        }
        return nil
    }

    mutating func append(_ new: some Sequence<RaftEntry>) {
        entries.append(contentsOf: new)
    }

    /// Drops every entry after `index` (which must not be below the snapshot).
    mutating func truncate(after index: Int) {
        guard index < lastIndex else { return }
        entries.removeLast(lastIndex - max(index, snapshot.index))
    }

    /// Forgets entries up to `position.index`, now covered by a snapshot. Later entries
    /// are kept when the log holds `position` itself; otherwise they cannot belong to the
    /// same history and go too.
    mutating func compact(through position: RaftLogPosition) {
        guard position.index > snapshot.index else { return }
        if term(at: position.index) == position.term {
            entries.removeFirst(position.index - snapshot.index)
        } else {
            entries = []
        }
        snapshot = position
    }
}
