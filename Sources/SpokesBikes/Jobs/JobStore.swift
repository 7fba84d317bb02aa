import Foundation
import Glibc
import Synchronization
import SpokesCluster

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
/// Every call blocks on file I/O: call it through `runBlocking`, never on the cooperative pool.
public final class JobStore: TaskJobHistory {
    /// One job, as `spokes jobs` lists it: a bike simulation (its title the network, its
    /// tasks the users) or a job of tasks alike. The stored and wire keys are the ones
    /// release 0.1 wrote (`network`, `users`, `completedUsers`, ...), so older files and
    /// nodes read it unchanged.
    public struct Summary: Sendable, Hashable, Codable {
        /// How a job stands.
        public enum State: String, Sendable, Hashable, Codable {
            case running
            /// Every task succeeded (for a bike job: every user completed, bikes conserved).
            case completed
            /// Stopped on request before every user ran.
            case cancelled
            /// Ended with tasks whose every attempt failed (or bikes not conserved).
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
        /// What the job is, in a few words: a job of tasks' title, a bike job's network.
        public var title: String
        /// How many tasks it has (a bike job: one per user).
        public var tasks: Int
        /// Tasks that succeeded, failed on every attempt, and were cancelled.
        public var succeeded: Int
        public var failed: Int
        public var cancelled: Int
        /// Attempts started again after a failed one.
        public var retries: Int
        /// Real seconds it ran (so far, while it runs).
        public var wallTime: Double
        /// The task kind of a job of tasks (`spokes map`, `spokes sweep`); nil for a bike job.
        public var kind: String?
        /// Why a ``State/stalled`` job cannot go on now.
        public var stalledReason: String?
        /// A running job's owner, priority, places in use and fair share (issue 32); nil
        /// for a stored job and a bike job.
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
                finished: ISO8601DateFormatter().string(from: finished), coordinator: report.coordinator, title: report.title,
                tasks: report.tasks.count, succeeded: report.succeeded, failed: report.failed,
                cancelled: report.cancelledTasks, retries: report.retries, wallTime: report.wallTime, kind: report.kind)
        }

        /// The summary of a finished job's report.
        public init(report: SimulationReport, coordinator: String, finished: Date) {
            let failed = report.failedUsers?.count ?? 0
            self.init(
                job: report.job ?? "?",
                state: report.cancelled ? .cancelled : failed > 0 || !report.conservation.holds ? .failed : .completed,
                finished: ISO8601DateFormatter().string(from: finished), coordinator: coordinator, title: report.network.id,
                tasks: report.users, succeeded: report.completedUsers, failed: failed,
                cancelled: report.cancelledUsers?.count ?? 0, retries: report.retries ?? 0, wallTime: report.wallTime)
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

        public var description: String { "cannot \(action) \(path): \(reason)" }

        /// `strerror` as part of a sentence: `no space left on device`.
        static func words(_ code: Int32) -> String {
            let text = String(cString: strerror(code))
            return text.prefix(1).lowercased() + text.dropFirst()
        }
    }

    /// The system calls that write, so a test can make the disk fill up.
    public struct FileOperations: Sendable {
        /// Writes some of the bytes to the descriptor: how many, or the `errno` of a failure.
        public var write: @Sendable (_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> (written: Int, error: Int32)
        /// Flushes the descriptor's data to the device: 0, or the `errno` of a failure.
        public var synchronize: @Sendable (_ descriptor: Int32) -> Int32

        public init(
            write: @escaping @Sendable (Int32, UnsafeRawBufferPointer) -> (written: Int, error: Int32),
            synchronize: @escaping @Sendable (Int32) -> Int32
        ) {
            self.write = write
            self.synchronize = synchronize
        }

        /// `write(2)` and `fdatasync(2)`.
        public static let system = FileOperations(
            write: { descriptor, bytes in
                let written = Glibc.write(descriptor, bytes.baseAddress, bytes.count)
                return written < 0 ? (-1, errno) : (written, 0)
            },
            synchronize: { fdatasync($0) == 0 ? 0 : errno })
    }

    /// One stored line, as it is encoded: `{"summary":...,"reportBytes":N,"report":...}`
    /// for a bike job, `"taskJob":...` in place of `"report"` for a job of tasks.
    private struct Line: Codable {
        var summary: Summary
        var reportBytes: Int?
        var report: SimulationReport?
        var taskJob: TaskJobReport?
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
        var device: UInt64 = 0
        var inode: UInt64 = 0
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
    private let operations: FileOperations
    private let log: @Sendable (String) -> Void
    private let index = Mutex(Index())

    /// The store in `directory` (`~` expands to the home directory), keeping the newest
    /// `keep` jobs; problems with the file go to `log`.
    public init(directory: String, keep: Int = 1000, operations: FileOperations = .system, log: @escaping @Sendable (String) -> Void = { _ in }) {
        let expanded = HomeDirectory.expand(directory)
        path = (expanded as NSString).appendingPathComponent("jobs.jsonl")
        self.keep = max(1, keep)
        self.operations = operations
        self.log = log
    }

    private var directory: String { (path as NSString).deletingLastPathComponent }

    /// Stores a finished job's report (marked `stored`), flushed to the device before it
    /// returns; throws ``StoreError`` and leaves the file as it was when it cannot.
    public func append(_ report: SimulationReport, coordinator: String, finished: Date = Date()) throws {
        try append(line: try Self.line(for: report, coordinator: coordinator, finished: finished))
    }

    /// Stores a finished job of tasks' report (marked `stored`), as ``append(_:coordinator:finished:)`` does.
    public func append(_ report: TaskJobReport) throws {
        try append(report, finished: Date())
    }

    /// Stores a finished job of tasks' report, as finished at `finished`.
    public func append(_ report: TaskJobReport, finished: Date) throws {
        var report = report
        report.stored = true
        report.storeError = nil
        let encoder = JSONEncoder()
        try append(line: try Self.line(
            summary: encoder.encode(Summary(taskJob: report, finished: finished)), key: Self.taskJobKey, record: encoder.encode(report)))
    }

    private func append(line: [UInt8]) throws {
        try Self.makeDirectories(directory)
        try index.withLock { index in
            try withFileLock(LOCK_EX) {
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
            try withFileLock(LOCK_SH) { try refresh(&index) }
            return index.entries.suffix(keep).map(\.summary)
        }
    }

    /// The report of bike job `job`, or nil when it is not stored here (or no longer kept).
    public func report(of job: String) throws -> SimulationReport? {
        try line(of: job)?.report
    }

    /// The report of the job of tasks `job`, or nil when it is not stored here (or no longer kept).
    public func taskJobReport(of job: String) throws -> TaskJobReport? {
        try line(of: job)?.taskJob
    }

    /// The stored line of `job`, decoded.
    private func line(of job: String) throws -> Line? {
        try index.withLock { index in
            // One hold of the lock: a compaction cannot move the line between the two.
            let found: (entry: Entry, bytes: [UInt8])? = try withFileLock(LOCK_SH) {
                try refresh(&index)
                guard let position = index.positions[job], position >= index.entries.count - keep else { return nil }
                let entry = index.entries[position]
                return (entry, try read(at: entry.offset, count: entry.length))
            }
            guard let (entry, bytes) = found else { return nil }
            guard let line = try? JSONDecoder().decode(Line.self, from: Data(bytes)) else {
                reportCorrupt(line: entry.line, "its report does not decode", in: &index)
                return nil
            }
            return line
        }
    }

    // MARK: - Writing

    /// Appends `line` whole, or truncates the file back and throws.
    private func write(_ line: [UInt8]) throws {
        let descriptor = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw StoreError("open", path, code: errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw StoreError("read the size of", path, code: errno) }
        let size = Int(status.st_size)
        var bytes = line
        var last: UInt8 = 0
        if size > 0, pread(descriptor, &last, 1, off_t(size - 1)) == 1, last != UInt8(ascii: "\n") {
            // A crash left a partial line: end it, so it stays one corrupt line.
            bytes.insert(UInt8(ascii: "\n"), at: 0)
        }
        do {
            try writeAll(bytes, to: descriptor, path: path)
        } catch {
            _ = ftruncate(descriptor, off_t(size))
            throw error
        }
        let flushed = operations.synchronize(descriptor)
        guard flushed == 0 else {
            _ = ftruncate(descriptor, off_t(size))
            throw StoreError("flush", path, code: flushed)
        }
        if size == 0 { Self.synchronizeDirectory(directory) }
    }

    /// Writes every byte, however many calls that takes; throws at the first failure.
    private func writeAll(_ bytes: [UInt8], to descriptor: Int32, path: String) throws {
        var sent = 0
        while sent < bytes.count {
            let (written, error) = bytes.withUnsafeBytes { operations.write(descriptor, UnsafeRawBufferPointer(rebasing: $0[sent...])) }
            if written < 0, error == EINTR { continue }
            // A write that makes no progress is a full device.
            guard written > 0 else { throw StoreError("write", path, code: written == 0 ? ENOSPC : error) }
            sent += written
        }
    }

    /// Rewrites the file with the newest `keep` records: a temp file, flushed, renamed
    /// over the old one. A failure leaves the old file (and logs why).
    private func compact(_ index: inout Index) {
        let kept = Array(index.entries.suffix(keep))
        let temporary = path + ".compacting"
        do {
            let output = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard output >= 0 else { throw StoreError("create", temporary, code: errno) }
            var succeeded = false
            defer {
                close(output)
                if !succeeded { unlink(temporary) }
            }
            var rewritten = Index()
            for entry in kept {
                var bytes = try read(at: entry.offset, count: entry.length)
                bytes.append(UInt8(ascii: "\n"))
                try writeAll(bytes, to: output, path: temporary)
                rewritten.lines += 1
                rewritten.positions[entry.summary.job] = rewritten.entries.count
                rewritten.entries.append(Entry(summary: entry.summary, offset: rewritten.end, length: entry.length, line: rewritten.lines))
                rewritten.end += bytes.count
            }
            let flushed = operations.synchronize(output)
            guard flushed == 0 else { throw StoreError("flush", temporary, code: flushed) }
            var status = stat()
            guard fstat(output, &status) == 0 else { throw StoreError("read the size of", temporary, code: errno) }
            guard rename(temporary, path) == 0 else { throw StoreError("replace", path, code: errno) }
            succeeded = true
            Self.synchronizeDirectory(directory)
            rewritten.loaded = true
            rewritten.device = UInt64(status.st_dev)
            rewritten.inode = UInt64(status.st_ino)
            index = rewritten
        } catch {
            log("cannot compact the job store \(path) to its newest \(keep) jobs: \(error)")
        }
    }

    // MARK: - Reading

    /// Brings `index` up to date with the file: whole lines appended since are indexed;
    /// a file that was replaced or truncated is indexed again.
    private func refresh(_ index: inout Index) throws {
        var status = stat()
        guard stat(path, &status) == 0 else {
            guard errno == ENOENT else { throw StoreError("read", path, code: errno) }
            index = Index()
            index.loaded = true
            return
        }
        guard status.st_mode & S_IFMT == S_IFREG else { throw StoreError("read", path, reason: "not a regular file") }
        let size = Int(status.st_size)
        if !index.loaded || UInt64(status.st_dev) != index.device || UInt64(status.st_ino) != index.inode || size < index.end {
            index = Index()
            index.loaded = true
            index.device = UInt64(status.st_dev)
            index.inode = UInt64(status.st_ino)
        }
        guard size > index.end else { return }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw StoreError("open", path, code: errno) }
        defer { close(descriptor) }
        var pending: [UInt8] = []
        var pendingOffset = index.end
        var position = index.end
        let chunk = 1 << 20
        while position < size {
            var bytes = [UInt8](repeating: 0, count: min(chunk, size - position))
            let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(position)) }
            guard count > 0 else {
                if count < 0, errno == EINTR { continue }
                if count < 0 { throw StoreError("read", path, code: errno) }
                break
            }
            pending.append(contentsOf: bytes.prefix(count))
            position += count
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
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw StoreError("open", path, code: errno) }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if read < 0, errno == EINTR { continue }
            guard read > 0 else { throw StoreError("read", path, code: read == 0 ? EIO : errno) }
            done += read
        }
        return bytes
    }

    /// Runs `body` holding `jobs.jsonl.lock` (shared or exclusive). Readers of a
    /// directory they cannot write to go without the lock.
    private func withFileLock<T>(_ operation: Int32, _ body: () throws -> T) throws -> T {
        let lockPath = path + ".lock"
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            if operation == LOCK_SH { return try body() }
            throw StoreError("open", lockPath, code: errno)
        }
        defer { close(descriptor) }
        while flock(descriptor, operation) != 0 {
            guard errno == EINTR else { throw StoreError("lock", lockPath, code: errno) }
        }
        return try body()
    }

    // MARK: - The line format

    private static let summaryPrefix = Array(#"{"summary":"#.utf8)
    private static let lengthKey = Array(#","reportBytes":"#.utf8)
    private static let reportKey = Array(#","report":"#.utf8)
    private static let taskJobKey = Array(#","taskJob":"#.utf8)

    /// The stored line of a report (marked `stored`): `{"summary":S,"reportBytes":N,"report":R}`
    /// and a newline. Valid JSON for any reader, and the summary can be read without
    /// decoding the report.
    static func line(for report: SimulationReport, coordinator: String, finished: Date) throws -> [UInt8] {
        var report = report
        report.stored = true
        report.storeError = nil
        let summary = Summary(report: report, coordinator: coordinator, finished: finished)
        let encoder = JSONEncoder()
        return line(summary: try encoder.encode(summary), key: reportKey, record: try encoder.encode(report))
    }

    /// `{"summary":S,"reportBytes":N` then `key` (`,"report":`) and the record, a newline.
    private static func line(summary: Data, key: [UInt8], record: Data) -> [UInt8] {
        var line = summaryPrefix + Array(summary)
        line += lengthKey + Array(String(record.count).utf8) + key
        line += Array(record)
        line += Array("}\n".utf8)
        return line
    }

    /// The summary of a stored line, or nil when the line is not a whole record.
    private static func summary(of line: ArraySlice<UInt8>) -> Summary? {
        let decoder = JSONDecoder()
        guard line.starts(with: summaryPrefix) else {
            // A line in the format before the summary came first: decode it all.
            return try? decoder.decode(Line.self, from: Data(line)).summary
        }
        let start = line.startIndex + summaryPrefix.count
        guard let end = endOfObject(in: line, from: start),
              let summary = try? decoder.decode(Summary.self, from: Data(line[start..<end])) else { return nil }
        var rest = line[end...]
        guard rest.starts(with: lengthKey) else { return nil }
        rest = rest.dropFirst(lengthKey.count)
        let digits = rest.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        guard (1...12).contains(digits.count), let reportBytes = Int(String(decoding: digits, as: UTF8.self)) else { return nil }
        rest = rest.dropFirst(digits.count)
        guard let key = [reportKey, taskJobKey].first(where: { rest.starts(with: $0) }),
              rest.count == key.count + reportBytes + 1, rest.last == UInt8(ascii: "}") else { return nil }
        return summary
    }

    /// The index just past the JSON object that starts at `start`, or nil when it does
    /// not end within `bytes`.
    static func endOfObject(in bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        guard start < bytes.endIndex, bytes[start] == UInt8(ascii: "{") else { return nil }
        var depth = 0
        var inString = false
        var escaped = false
        for index in start..<bytes.endIndex {
            let byte = bytes[index]
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return index + 1 }
            default: break
            }
        }
        return nil
    }

    // MARK: - Folders

    /// `mkdir -p`, with the cause in words when it fails.
    static func makeDirectories(_ path: String) throws {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0, errno != EEXIST {
                throw StoreError("create the folder", current, code: errno)
            }
        }
        var status = stat()
        guard stat(path, &status) == 0 else { throw StoreError("create the folder", path, code: errno) }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw StoreError("use the folder", path, code: ENOTDIR) }
    }

    /// Flushes a folder, so a file created or renamed in it survives a crash.
    private static func synchronizeDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }
}
