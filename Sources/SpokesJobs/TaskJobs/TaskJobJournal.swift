import FoundationEssentials
import Glibc
import SpokesCluster
import SpokesConcurrency

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
/// Its files are on a ``Disk`` (the node's runtime's, so the simulator's crashes reach
/// it). Every call blocks on file I/O: call it through `runBlocking`.
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
    private let disk: any Disk
    private let log: @Sendable (String) -> Void

    /// The journal under `dataDirectory` (`~` is `$HOME`) on `disk`; problems go to `log`.
    public init(dataDirectory: String, disk: any Disk = RealDisk(), log: @escaping @Sendable (String) -> Void = { _ in }) {
        directory = DiskPath.join(HomeDirectory.expand(dataDirectory), "running-jobs")
        self.disk = disk
        self.log = log
    }

    private func path(of job: String) -> String {
        DiskPath.join(directory, job + ".jsonl")
    }

    /// Writes a new job's spec, flushed (file and folder) before it returns.
    public func begin(_ spec: TaskJobSpec) throws {
        let line = try JSONEncoder().encode(SpecLine(spec: spec)) + Data("\n".utf8)
        let path = path(of: spec.id)
        do throws(DiskError) {
            try disk.makeDirectory(directory)
            // A file left by an earlier job of this id is started afresh.
            if try disk.size(of: path) != nil { try disk.truncate(path, to: 0) }
        } catch {
            throw JournalError(path: error.path, reason: error.reason)
        }
        try append(line, to: path)
        do throws(DiskError) {
            try disk.syncDirectory(directory)
        } catch {
            throw JournalError(path: error.path, reason: error.reason)
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
        guard (try? disk.size(of: path(of: job))) ?? nil != nil else {
            throw JournalError(path: path(of: job), reason: String(cString: strerror(ENOENT)))
        }
        try append(bytes, to: path(of: job))
    }

    /// Forgets `job` (its report is stored).
    public func finish(_ job: String) {
        do throws(DiskError) {
            try disk.remove(path(of: job))
        } catch {
            log("\(error)")
        }
    }

    /// Every job on disk that did not finish, with the ends its tasks had.
    public func unfinished() -> [Unfinished] {
        guard let names = (try? disk.contents(ofDirectory: directory)) ?? nil else { return [] }
        let decoder = JSONDecoder()
        var jobs: [Unfinished] = []
        for name in names.sorted() where name.hasSuffix(".jsonl") {
            let file = DiskPath.join(directory, name)
            guard let bytes = (try? disk.read(file)) ?? nil else { continue }
            let data = Data(bytes)
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
    private func append(_ bytes: Data, to path: String) throws {
        let size = (try? disk.size(of: path)) ?? nil
        do throws(DiskError) {
            try disk.append(Array(bytes), to: path)
            try disk.sync(path)
        } catch {
            if let size { try? disk.truncate(path, to: size) }
            throw JournalError(path: path, reason: error.reason)
        }
    }

    /// A journal write that failed, in words.
    public struct JournalError: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot write \(path): \(reason)" }
    }
}
