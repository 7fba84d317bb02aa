import FoundationEssentials
import Glibc
import Synchronization
import SpokesCluster
import SpokesConcurrency

/// Finished jobs, one JSON line each, in `jobs.jsonl` under a node's data directory.
///
/// What it keeps true:
/// - **An append is whole or nothing.** Under an exclusive `flock` on `jobs.jsonl.lock`
///   (nodes sharing a data directory take turns), the line is written, then flushed with
///   `fdatasync`. If either fails, the file is truncated back to its old size and the
///   error names the cause in words (`no space left on device`). A line left partial by a
///   crash never glues onto the next record: an append starts on a new line.
/// - **Reading does not read the history.** An index in memory (job id -> where its line
///   is, and its summary) is built by one pass over the file, then extended with what was
///   appended since, by this process or another; a file replaced by compaction is indexed
///   again. Listing reads no report; a report is read from its own line. Each line starts
///   with its summary and says how long its report is, so indexing decodes only the
///   summary and still notices a line cut short.
/// - **A corrupt line is reported once** (to `log`, with the file and line number) and
///   skipped; every other record still reads.
/// - **The history is bounded.** The newest `keep` jobs are listed and readable; once the
///   file holds a tenth more, it is rewritten with those (temp file, `fsync`, `rename`),
///   so a rewrite's cost is spread over many appends.
///
/// Its files are on a ``Disk``: the machine's (``RealDisk``, the default), or the
/// simulator's, whose crashes lose what was not flushed and whose capacity fills up.
///
/// Every call blocks on file I/O: call it through `runBlocking`, never on the cooperative pool.
public final class JobStore: TaskJobHistory {
    /// One job, as `spokes jobs` lists it, whatever runs it: a job of tasks, or a
    /// workload's own job (its title and tasks as the workload counts them). The stored
    /// and wire keys are the ones
    /// release 0.1 wrote (`network`, `users`, `completedUsers`, ...), so older files and
    /// nodes read it unchanged.
    public struct Summary: Sendable, Hashable, Codable {
        /// How a job stands.
        public enum State: String, Sendable, Hashable, Codable {
            case running
            /// Every task succeeded (and the workload's own checks held).
            case completed
            /// Stopped on request before every task ran.
            case cancelled
            /// Ended with tasks whose every attempt failed (or a workload's check failed).
            case failed
            /// Held by replicas too few of which can take part: it goes on once a majority
            /// of them is back (`stalledReason` says which are missing).
            case stalled
        }

        public var job: String
        public var state: State
        /// When it finished, ISO 8601; nil while it runs.
        public var finished: String?
        public var coordinator: String
        /// What the job is, in a few words: a job of tasks' title, or the workload's.
        public var title: String
        /// How many tasks it has.
        public var tasks: Int
        /// Tasks that succeeded, failed on every attempt, and were cancelled.
        public var succeeded: Int
        public var failed: Int
        public var cancelled: Int
        /// Attempts started again after a failed one.
        public var retries: Int
        /// Real seconds it ran (so far, while it runs).
        public var wallTime: Double
        /// The task kind of a job of tasks (`spokes map`, `spokes sweep`); nil for a workload's own job.
        public var kind: String?
        /// Why a ``State/stalled`` job cannot go on now.
        public var stalledReason: String?
        /// A running job's owner, priority, places in use and fair share (issue 32); nil
        /// for a stored job and a workload's own job.
        public var slots: JobSlots?

        /// Running, or stalled: not ended.
        public var isUnfinished: Bool { state == .running || state == .stalled }

        public init(
            job: String, state: State, finished: String?, coordinator: String, title: String, tasks: Int,
            succeeded: Int, failed: Int, cancelled: Int, retries: Int, wallTime: Double, kind: String? = nil,
            stalledReason: String? = nil
        ) {
            self.stalledReason = stalledReason
            self.job = job
            self.state = state
            self.finished = finished
            self.coordinator = coordinator
            self.title = title
            self.tasks = tasks
            self.succeeded = succeeded
            self.failed = failed
            self.cancelled = cancelled
            self.retries = retries
            self.wallTime = wallTime
            self.kind = kind
        }

        /// The summary of a finished job of tasks.
        public init(taskJob report: TaskJobReport, finished: Date) {
            self.init(
                job: report.job, state: report.cancelled ? .cancelled : report.failed > 0 ? .failed : .completed,
                finished: finished.ISO8601Format(), coordinator: report.coordinator, title: report.title,
                tasks: report.tasks.count, succeeded: report.succeeded, failed: report.failed,
                cancelled: report.cancelledTasks, retries: report.retries, wallTime: report.wallTime, kind: report.kind)
        }

        private enum CodingKeys: String, CodingKey {
            case job, state, finished, coordinator, retries, wallTime, kind, stalledReason, slots
            case title = "network", tasks = "users", succeeded = "completedUsers", failed = "failedUsers", cancelled = "cancelledUsers"
        }

        /// Lines stored before states existed said only `cancelled`.
        private enum EarlierKeys: String, CodingKey { case cancelled }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            job = try container.decode(String.self, forKey: .job)
            finished = try container.decodeIfPresent(String.self, forKey: .finished)
            coordinator = try container.decode(String.self, forKey: .coordinator)
            title = try container.decode(String.self, forKey: .title)
            tasks = try container.decode(Int.self, forKey: .tasks)
            succeeded = try container.decode(Int.self, forKey: .succeeded)
            failed = try container.decode(Int.self, forKey: .failed)
            cancelled = try container.decodeIfPresent(Int.self, forKey: .cancelled) ?? 0
            retries = try container.decodeIfPresent(Int.self, forKey: .retries) ?? 0
            wallTime = try container.decode(Double.self, forKey: .wallTime)
            kind = try container.decodeIfPresent(String.self, forKey: .kind)
            stalledReason = try container.decodeIfPresent(String.self, forKey: .stalledReason)
            slots = try container.decodeIfPresent(JobSlots.self, forKey: .slots)
            if let state = try container.decodeIfPresent(State.self, forKey: .state) {
                self.state = state
            } else {
                let cancelled = try decoder.container(keyedBy: EarlierKeys.self).decodeIfPresent(Bool.self, forKey: .cancelled) ?? false
                state = cancelled ? .cancelled : failed > 0 ? .failed : .completed
            }
        }
    }

    /// Why a record could not be stored or read, in words.
    public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What was being done, e.g. `write`.
        public var action: String
        public var path: String
        /// The cause, e.g. `no space left on device`.
        public var reason: String

        public init(_ action: String, _ path: String, reason: String) {
            self.action = action
            self.path = path
            self.reason = reason
        }

        /// The error of a failed system call, from its `errno`.
        init(_ action: String, _ path: String, code: Int32) {
            self.init(action, path, reason: Self.words(code))
        }

        /// A disk's failure, in the store's words.
        init(_ failure: DiskError) {
            self.init(failure.operation, failure.path, code: failure.code)
        }

        public var description: String { "cannot \(action) \(path): \(reason)" }

        /// `strerror` as part of a sentence: `no space left on device`.
        static func words(_ code: Int32) -> String {
            let text = String(cString: strerror(code))
            return text.prefix(1).lowercased() + text.dropFirst()
        }
    }

    /// One stored line, as it is encoded: `{"summary":S,"reportBytes":N,"KEY":R}`, where
    /// KEY names the kind of report R (``taskJobKey`` for a job of tasks; a workload
    /// stores its own jobs' reports under a key of its own). Only the summary is decoded
    /// here: the report is the workload's.
    private struct Line: Decodable {
        var summary: Summary
    }

    /// Where a record's line is.
    private struct Entry {
        var summary: Summary
        var offset: Int
        /// Bytes of the line, without its newline.
        var length: Int
        /// 1-based, for messages.
        var line: Int
    }

    /// What has been read of the file: everything up to `end`.
    private struct Index {
        var loaded = false
        /// The file indexed (``DiskFileStatus/identity``): another means compaction replaced it.
        var identity: UInt64 = 0
        /// Bytes indexed: up to the end of the last whole line.
        var end = 0
        /// Whole lines seen so far.
        var lines = 0
        /// Readable records, oldest first.
        var entries: [Entry] = []
        /// Job id -> its latest entry.
        var positions: [String: Int] = [:]
        /// Lines already reported as corrupt.
        var reported: Set<Int> = []
    }

    public let path: String
    /// The newest jobs listed and kept.
    public let keep: Int
    private let disk: any Disk
    /// Dates the jobs stored without a time of their own.
    public let clock: any RuntimeClock
    private let log: @Sendable (String) -> Void
    private let index = Mutex(Index())
    /// Reports decoded last, with the bytes each was decoded from (``report(of:key:decodedBy:)``).
    private let decoded = DecodedReports()

    /// The store in `directory` (`~` expands to the home directory) on `disk`, keeping the
    /// newest `keep` jobs; problems with the file go to `log`.
    public init(
        directory: String, keep: Int = 1000, disk: any Disk = RealDisk(), clock: any RuntimeClock = RealClock(),
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        path = DiskPath.join(HomeDirectory.expand(directory), "jobs.jsonl")
        self.keep = max(1, keep)
        self.disk = disk
        self.clock = clock
        self.log = log
    }

    /// `node`'s store: in its data directory, keeping `jobs.keep` jobs, on its runtime's
    /// disk and clock, problems logged to the node.
    public convenience init(of node: ClusterNode) {
        let system = node.system
        self.init(directory: node.settings.dataDirectory, keep: node.settings.jobsKeep, disk: system.runtime.disk, clock: system.runtime.clock) {
            system.log($0)
        }
    }

    /// Now, on the clock that dates stored jobs (the node's runtime's).
    public var now: Date { Date(timeIntervalSince1970: clock.unixNow) }

    private var directory: String { DiskPath.parent(of: path) }

    /// Runs `body`, a disk's failure told as a ``StoreError``.
    private func io<T>(_ body: () throws(DiskError) -> T) throws(StoreError) -> T {
        do throws(DiskError) { return try body() } catch { throw StoreError(error) }
    }

    /// Stores a finished job: its summary, and its report encoded as JSON under `key`
    /// (the kind of report: ``taskJobKey``, or a workload's own). Flushed to the device
    /// before it returns; throws ``StoreError`` and leaves the file as it was when it cannot.
    public func append(summary: Summary, key: String, report: Data) throws {
        try append(line: Self.line(summary: summary, key: key, report: report))
    }

    /// The stored line of a finished job (``append(summary:key:report:)``), newline included.
    public static func line(summary: Summary, key: String, report: Data) throws -> [UInt8] {
        guard isRecordKey(key) else { throw StoreError("store a report under", key, code: EINVAL) }
        return line(summary: try JSONEncoder().encode(summary), key: Array(#","\#(key)":"#.utf8), record: report)
    }

    /// The key a job of tasks' report is stored under.
    public static let taskJobKey = "taskJob"

    /// Stores a finished job of tasks' report (marked `stored`), as ``append(summary:key:report:)`` does.
    public func append(_ report: TaskJobReport) throws {
        try append(report, finished: now)
    }

    /// Stores a finished job of tasks' report, as finished at `finished`.
    public func append(_ report: TaskJobReport, finished: Date) throws {
        var report = report
        report.stored = true
        report.storeError = nil
        try append(summary: Summary(taskJob: report, finished: finished), key: Self.taskJobKey, report: JSONEncoder().encode(report))
    }

    private func append(line: [UInt8]) throws {
        let directory = directory
        try io { () throws(DiskError) in try disk.makeDirectory(directory) }
        guard try io({ () throws(DiskError) in try disk.status(of: directory) })?.isRegularFile == false else {
            throw StoreError("use the folder", directory, code: ENOTDIR)
        }
        try index.withLock { index in
            try disk.withLock(path + ".lock", exclusive: true) {
                try refresh(&index)
                try write(line)
                try refresh(&index)
                if index.entries.count > keep + max(1, keep / 10) {
                    compact(&index)
                }
            }
        }
    }

    /// The stored jobs, oldest first (at most the newest `keep`).
    public func summaries() throws -> [Summary] {
        try index.withLock { index in
            try disk.withLock(path + ".lock", exclusive: false) { try refresh(&index) }
            return index.entries.suffix(keep).map(\.summary)
        }
    }

    /// The report of the job of tasks `job`, or nil when it is not stored here (or no longer kept).
    public func taskJobReport(of job: String) throws -> TaskJobReport? {
        try report(of: job, key: Self.taskJobKey) { try? JSONDecoder().decode(TaskJobReport.self, from: $0) }
    }

    /// The report `job` was stored with under `key`, as `decode` makes it of its JSON; nil
    /// when it is not stored here (or no longer kept), is a job of another kind, or
    /// `decode` gives nil. Decoded once for the bytes stored (``DecodedReports``): `decode`
    /// must be the one way a `Value` is made of a report stored under `key`.
    public func report<Value: Sendable>(of job: String, key: String, decodedBy decode: (Data) -> Value?) throws -> Value? {
        guard let source = try report(of: job, key: key) else { return nil }
        return decoded.value(of: job, recordKey: key, source: source, decode: decode)
    }

    /// The report `job` was stored with under `key` (its JSON), or nil when it is not
    /// stored here (or no longer kept), or is a job of another kind.
    public func report(of job: String, key: String) throws -> Data? {
        try index.withLock { index in
            // One hold of the lock: a compaction cannot move the line between the two.
            let found: (entry: Entry, bytes: [UInt8])? = try disk.withLock(path + ".lock", exclusive: false) {
                try refresh(&index)
                guard let position = index.positions[job], position >= index.entries.count - keep else { return nil }
                let entry = index.entries[position]
                return (entry, try read(at: entry.offset, count: entry.length))
            }
            guard let (entry, bytes) = found else { return nil }
            guard let (found, report) = Self.report(in: bytes[...]) else {
                reportCorrupt(line: entry.line, "its report does not decode", in: &index)
                return nil
            }
            return found == key ? report : nil
        }
    }

    // MARK: - Writing

    /// Appends `line` whole and flushes it, or truncates the file back and throws.
    private func write(_ line: [UInt8]) throws {
        let (path, directory, disk) = (path, directory, disk)
        try io { () throws(DiskError) in
            let size = try disk.size(of: path) ?? 0
            var bytes = line
            if size > 0, try disk.read(path, at: size - 1, count: 1) != [UInt8(ascii: "\n")] {
                // A crash left a partial line: end it, so it stays one corrupt line.
                bytes.insert(UInt8(ascii: "\n"), at: 0)
            }
            do throws(DiskError) {
                try disk.append(bytes, to: path)
                try disk.sync(path)
            } catch {
                if (try? disk.size(of: path)) ?? nil != nil { try? disk.truncate(path, to: size) }
                throw error
            }
            if size == 0 { try? disk.syncDirectory(directory) }
        }
    }

    /// Rewrites the file with the newest `keep` records: a temp file, flushed, renamed
    /// over the old one. A failure leaves the old file (and logs why).
    private func compact(_ index: inout Index) {
        let kept = Array(index.entries.suffix(keep))
        let (path, directory, disk) = (path, directory, disk)
        let temporary = path + ".compacting"
        do {
            var rewritten = Index()
            try? disk.remove(temporary)
            for entry in kept {
                var bytes = try read(at: entry.offset, count: entry.length)
                bytes.append(UInt8(ascii: "\n"))
                try io { () throws(DiskError) in try disk.append(bytes, to: temporary) }
                rewritten.lines += 1
                rewritten.positions[entry.summary.job] = rewritten.entries.count
                rewritten.entries.append(Entry(summary: entry.summary, offset: rewritten.end, length: entry.length, line: rewritten.lines))
                rewritten.end += bytes.count
            }
            let status = try io { () throws(DiskError) in
                try disk.sync(temporary)
                let status = try disk.status(of: temporary)
                try disk.rename(temporary, to: path)
                try? disk.syncDirectory(directory)
                return status
            }
            rewritten.loaded = true
            rewritten.identity = status?.identity ?? 0
            index = rewritten
        } catch {
            try? disk.remove(temporary)
            log("cannot compact the job store \(path) to its newest \(keep) jobs: \(error)")
        }
    }

    // MARK: - Reading

    /// Brings `index` up to date with the file: whole lines appended since are indexed;
    /// a file that was replaced or truncated is indexed again.
    private func refresh(_ index: inout Index) throws {
        let (path, disk) = (path, disk)
        guard let status = try io({ () throws(DiskError) in try disk.status(of: path) }) else {
            index = Index()
            index.loaded = true
            return
        }
        guard status.isRegularFile else { throw StoreError("read", path, reason: "not a regular file") }
        let size = status.size
        if !index.loaded || status.identity != index.identity || size < index.end {
            index = Index()
            index.loaded = true
            index.identity = status.identity
        }
        guard size > index.end else { return }
        var pending: [UInt8] = []
        var pendingOffset = index.end
        var position = index.end
        let chunk = 1 << 20
        while position < size {
            let from = position
            let bytes = try io { () throws(DiskError) in try disk.read(path, at: from, count: min(chunk, size - from)) }
            guard !bytes.isEmpty else { break }
            pending.append(contentsOf: bytes)
            position += bytes.count
            var start = 0
            while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                index.lines += 1
                add(pending[start..<newline], offset: pendingOffset + start, to: &index)
                start = newline + 1
            }
            pending.removeFirst(start)
            pendingOffset += start
        }
        index.end = pendingOffset
        if !pending.isEmpty {
            // A partial last line: cut short by a crash (a writer holds the lock while it
            // writes). The next append ends it with a newline.
            reportCorrupt(line: index.lines + 1, "it is incomplete (\(pending.count) bytes, no newline)", in: &index)
        }
    }

    private func add(_ line: ArraySlice<UInt8>, offset: Int, to index: inout Index) {
        guard !line.isEmpty else { return }
        guard let summary = Self.summary(of: line) else {
            reportCorrupt(line: index.lines, "it is not a job record", in: &index)
            return
        }
        index.positions[summary.job] = index.entries.count
        index.entries.append(Entry(summary: summary, offset: offset, length: line.count, line: index.lines))
    }

    private func reportCorrupt(line: Int, _ why: String, in index: inout Index) {
        guard index.reported.insert(line).inserted else { return }
        log("job store \(path):\(line): skipped, \(why)")
    }

    private func read(at offset: Int, count: Int) throws -> [UInt8] {
        let (path, disk) = (path, disk)
        let bytes = try io { () throws(DiskError) in try disk.read(path, at: offset, count: count) }
        guard bytes.count == count else { throw StoreError("read", path, code: EIO) }
        return bytes
    }

    // MARK: - The line format

    private static let summaryPrefix = Array(#"{"summary":"#.utf8)
    private static let lengthKey = Array(#","reportBytes":"#.utf8)

    /// Whether `key` may name a kind of report: 1 to 32 ASCII letters, other than the
    /// line's own keys.
    static func isRecordKey(_ key: String) -> Bool {
        (1...32).contains(key.utf8.count) && key.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0 | 0x20) }
            && key != "summary" && key != "reportBytes"
    }

    /// `{"summary":S,"reportBytes":N` then `key` (`,"taskJob":`) and the record, a newline:
    /// valid JSON for any reader, and the summary can be read without decoding the report.
    private static func line(summary: Data, key: [UInt8], record: Data) -> [UInt8] {
        var line = summaryPrefix + Array(summary)
        line += lengthKey + Array(String(record.count).utf8) + key
        line += Array(record)
        line += Array("}\n".utf8)
        return line
    }

    /// The summary of a stored line, or nil when the line is not a whole record.
    private static func summary(of line: ArraySlice<UInt8>) -> Summary? {
        guard line.starts(with: summaryPrefix) else {
            // A line in the format before the summary came first: decode it all.
            return try? JSONDecoder().decode(Line.self, from: Data(line)).summary
        }
        let start = line.startIndex + summaryPrefix.count
        guard let end = endOfObject(in: line, from: start), report(in: line) != nil else { return nil }
        return try? JSONDecoder().decode(Summary.self, from: Data(line[start..<end]))
    }

    /// The kind (key) and JSON of a stored line's report, or nil when the line is not a
    /// whole record. A line in the format before the summary came first is read whole.
    private static func report(in line: ArraySlice<UInt8>) -> (key: String, report: Data)? {
        guard line.starts(with: summaryPrefix) else {
            guard let members = members(ofObject: line),
                  let (key, value) = members.first(where: { $0.key != "summary" && $0.key != "reportBytes" }) else { return nil }
            return (key, Data(value))
        }
        guard let end = endOfObject(in: line, from: line.startIndex + summaryPrefix.count) else { return nil }
        var rest = line[end...]
        guard rest.starts(with: lengthKey) else { return nil }
        rest = rest.dropFirst(lengthKey.count)
        let digits = rest.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        guard (1...12).contains(digits.count), let reportBytes = Int(String(decoding: digits, as: UTF8.self)) else { return nil }
        rest = rest.dropFirst(digits.count)
        // `,"KEY":`, the report's bytes, and the closing brace.
        guard rest.starts(with: Array(#",""#.utf8)) else { return nil }
        rest = rest.dropFirst(2)
        let key = rest.prefix { $0 != UInt8(ascii: "\"") }
        rest = rest.dropFirst(key.count)
        let name = String(decoding: key, as: UTF8.self)
        guard isRecordKey(name), rest.starts(with: Array(#"":"#.utf8)) else { return nil }
        rest = rest.dropFirst(2)
        guard rest.count == reportBytes + 1, rest.last == UInt8(ascii: "}") else { return nil }
        return (name, Data(rest.dropLast()))
    }

    /// The members of the JSON object `bytes` holds, in order: each key, and its value's
    /// bytes as they are; nil when `bytes` is not one object (surrounding whitespace
    /// aside). Checks the structure, not every value: a value's own syntax is its
    /// reader's to check. Pure; reads the line format before the summary came first.
    static func members(ofObject bytes: ArraySlice<UInt8>) -> [(key: String, value: ArraySlice<UInt8>)]? {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
        func skipSpaces(_ index: inout Int) { while index < bytes.endIndex, isSpace(bytes[index]) { index += 1 } }
        var index = bytes.startIndex
        skipSpaces(&index)
        guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        var members: [(key: String, value: ArraySlice<UInt8>)] = []
        skipSpaces(&index)
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "\""), let keyEnd = endOfValue(in: bytes, from: index),
                      let key = Self.string(bytes[index..<keyEnd]) else { return nil }
                index = keyEnd
                skipSpaces(&index)
                guard index < bytes.endIndex, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                skipSpaces(&index)
                guard let valueEnd = endOfValue(in: bytes, from: index) else { return nil }
                members.append((key, bytes[index..<valueEnd]))
                index = valueEnd
                skipSpaces(&index)
                guard index < bytes.endIndex else { return nil }
                let separator = bytes[index]
                index += 1
                if separator == UInt8(ascii: "}") { break }
                guard separator == UInt8(ascii: ",") else { return nil }
                skipSpaces(&index)
            }
        }
        skipSpaces(&index)
        return index == bytes.endIndex ? members : nil
    }

    /// The JSON string `bytes` holds: read by hand (``HandJSON/Reader``, the value
    /// `JSONDecoder` gives, a key of every job command on every replica), else by
    /// `JSONDecoder`; nil when it is not one.
    static func string(_ bytes: ArraySlice<UInt8>) -> String? {
        var reader = HandJSON.Reader(bytes: bytes)
        if let text = reader.string(), reader.atEnd { return text }
        return try? JSONDecoder().decode(String.self, from: Data(bytes))
    }

    /// Where the JSON value starting at `start` ends (the index after it): an object or
    /// array at its closing bracket, a string after its closing quote, a number or literal
    /// before the next separator. Nil when it does not end within `bytes`.
    static func endOfValue(in bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        guard start < bytes.endIndex else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            // Over the buffer rather than the slice's indices, a string skipped in a loop
            // of its own: a job batch's command is split so on every replica, and its
            // workload's events may be hundreds of kilobytes.
            return bytes.withUnsafeBufferPointer { buffer -> Int? in
                var depth = 0
                var offset = start - bytes.startIndex
                while offset < buffer.count {
                    let byte = buffer[offset]
                    offset += 1
                    switch byte {
                    case UInt8(ascii: "\""):
                        // To the closing quote; an escape's next byte is never one.
                        var closed = false
                        while offset < buffer.count {
                            let inner = buffer[offset]
                            offset += 1
                            if inner == UInt8(ascii: "\"") {
                                closed = true
                                break
                            }
                            if inner == UInt8(ascii: "\\") { offset += 1 }
                        }
                        guard closed else { return nil }
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 { return bytes.startIndex + offset }
                    default: break
                    }
                }
                return nil
            }
        case UInt8(ascii: "\""):
            var escaped = false
            for index in (start + 1)..<bytes.endIndex {
                let byte = bytes[index]
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { return index + 1 }
            }
            return nil
        default:
            let end = bytes[start...].firstIndex { [UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09].contains($0) } ?? bytes.endIndex
            return end > start ? end : nil
        }
    }

    /// The index just past the JSON object that starts at `start`, or nil when it does
    /// not end within `bytes`.
    static func endOfObject(in bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        guard start < bytes.endIndex, bytes[start] == UInt8(ascii: "{") else { return nil }
        return endOfValue(in: bytes, from: start)
    }
}
