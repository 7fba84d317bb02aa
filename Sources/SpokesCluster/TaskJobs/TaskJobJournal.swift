import Foundation
import Glibc

/// The running jobs of tasks a node coordinates, on its disk, so a job outlives a crash
/// of its coordinator: `running-jobs/ID.jsonl` under the node's own folder (for `spokes
/// node`, `nodes/NAME/` of its data directory), the job's ``TaskJobSpec`` on its first line, then one line per task that ended
/// (`{"task": N, "end": {...}}`). A job is written (and flushed) before its submitter
/// hears it was accepted, task ends are flushed in batches as they come (group commit),
/// and the file is removed once the job's report is in the job store. When the node
/// starts again, ``unfinished()`` gives every job still there with the ends it had, and
/// ``TaskJobs`` runs the rest.
///
/// A crash can leave the last line partial: it is dropped (and so is anything after a
/// line that does not decode), never read as data; the task it was for runs again.
///
/// Every call blocks on file I/O: call it through `runBlocking`.
public final class TaskJobJournal: Sendable {
    /// A job found on disk: what it runs and the tasks that had ended.
    public struct Unfinished: Sendable {
        public var spec: TaskJobSpec
        public var ends: [Int: TaskJobReport.TaskEnd]
        /// Set when the job was cancelled before its coordinator died: none of its tasks runs again.
        public var cancelReason: String?
        /// Set when the job cannot go on now (too few of its replicas can take part): why.
        public var stalled: String?

        public init(spec: TaskJobSpec, ends: [Int: TaskJobReport.TaskEnd], cancelReason: String? = nil, stalled: String? = nil) {
            self.spec = spec
            self.ends = ends
            self.cancelReason = cancelReason
            self.stalled = stalled
        }
    }

    private struct SpecLine: Codable { var spec: TaskJobSpec }
    private struct EndLine: Codable {
        var task: Int
        var end: TaskJobReport.TaskEnd
    }

    public let directory: String
    private let log: @Sendable (String) -> Void

    /// The journal under `dataDirectory` (`~` is `$HOME`); problems go to `log`.
    public init(dataDirectory: String, log: @escaping @Sendable (String) -> Void = { _ in }) {
        directory = (HomeDirectory.expand(dataDirectory) as NSString).appendingPathComponent("running-jobs")
        self.log = log
    }

    private func path(of job: String) -> String {
        (directory as NSString).appendingPathComponent(job + ".jsonl")
    }

    /// Writes a new job's spec, flushed (file and folder) before it returns.
    public func begin(_ spec: TaskJobSpec) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let line = try JSONEncoder().encode(SpecLine(spec: spec)) + Data("\n".utf8)
        try append(line, to: path(of: spec.id), creating: true)
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            close(folder)
        }
    }

    /// Appends the ends of `tasks` of `job`, flushed before it returns.
    public func record(_ ends: [(task: Int, end: TaskJobReport.TaskEnd)], of job: String) throws {
        guard !ends.isEmpty else { return }
        let encoder = JSONEncoder()
        var bytes = Data()
        for (task, end) in ends {
            bytes += try encoder.encode(EndLine(task: task, end: end))
            bytes += Data("\n".utf8)
        }
        try append(bytes, to: path(of: job), creating: false)
    }

    /// Forgets `job` (its report is stored).
    public func finish(_ job: String) {
        if unlink(path(of: job)) != 0, errno != ENOENT {
            log("cannot remove \(path(of: job)): \(String(cString: strerror(errno)))")
        }
    }

    /// Every job on disk that did not finish, with the ends its tasks had.
    public func unfinished() -> [Unfinished] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        let decoder = JSONDecoder()
        var jobs: [Unfinished] = []
        for name in names.sorted() where name.hasSuffix(".jsonl") {
            let file = (directory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            // The last piece is whole only when the file ends with a newline.
            if let last = lines.last, !last.isEmpty {
                log("\(file): dropped its last line, cut short by a crash (\(last.count) bytes)")
            }
            lines.removeLast()
            guard let first = lines.first, let spec = try? decoder.decode(SpecLine.self, from: Data(first)).spec,
                  (try? spec.checkRanges()) != nil, name == spec.id + ".jsonl"
            else {
                log("\(file): not a job journal; left alone")
                continue
            }
            var ends: [Int: TaskJobReport.TaskEnd] = [:]
            for (number, line) in lines.dropFirst().enumerated() {
                guard let entry = try? decoder.decode(EndLine.self, from: Data(line)), spec.inputs.indices.contains(entry.task) else {
                    log("\(file):\(number + 2): not a task's end; it and what follows are dropped")
                    break
                }
                ends[entry.task] = entry.end
            }
            jobs.append(Unfinished(spec: spec, ends: ends))
        }
        return jobs
    }

    /// Appends `bytes` whole and flushes them; a partial write is cut back off.
    private func append(_ bytes: Data, to path: String, creating: Bool) throws {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | (creating ? O_CREAT | O_TRUNC : 0), 0o644)
        guard descriptor >= 0 else { throw JournalError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var size = stat()
        _ = fstat(descriptor, &size)
        var written = 0
        let failure: String? = bytes.withUnsafeBytes { buffer -> String? in
            while written < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return String(cString: strerror(count == 0 ? ENOSPC : errno)) }
                written += count
            }
            return fdatasync(descriptor) == 0 ? nil : String(cString: strerror(errno))
        }
        if let failure {
            _ = ftruncate(descriptor, size.st_size)
            throw JournalError(path: path, reason: failure)
        }
    }

    /// A journal write that failed, in words.
    public struct JournalError: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot write \(path): \(reason)" }
    }
}
