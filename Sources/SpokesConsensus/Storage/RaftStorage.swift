import SpokesConcurrency
import Synchronization

/// One group's durable state in one directory: `log` (records appended by flushes, see
/// `RaftRecordFraming` and `RaftLogFormat`) and `snapshot`.
///
/// - `write` applies a `RaftWrite` to the in-memory copy and buffers its records;
///   `sync` appends the buffer as one record and makes it durable with one `fdatasync`
///   (group commit: any number of writes, one flush), then returns the position of the
///   last entry held, for `RaftReplica.persisted(through:term:now:)`.
/// - A write with a snapshot is made durable at once: the snapshot is written to a
///   temporary file, flushed, renamed over `snapshot` and the directory flushed; then the
///   log is rewritten the same way without the entries the snapshot covers (which also
///   makes any buffered writes durable). A crash between the two leaves a new snapshot
///   beside an old log; opening reconciles them (entries the snapshot covers are dropped,
///   and all of them if the log does not hold the snapshot's last entry).
/// - Opening replays the log, drops a torn last record (and truncates the file back to
///   the last good one), and reports damage anywhere else as an error naming the file
///   and offset.
/// - After a failed write or flush the storage refuses everything (`unusable`): what
///   reached the disk is unknown, so the replica must stop rather than guess.
///
/// Files go through a ``Disk``: the machine's (``RealDisk``, the default) or the
/// simulator's (``SimulatedDisk``), whose crashes lose what was not flushed.
///
/// Every method blocks on file I/O: call it from a thread of your own (`runBlocking`),
/// never from the Swift cooperative pool. It is safe to call from several threads (one
/// lock), though a group's writes and syncs must come in the order the replica issued
/// them.
public final class RaftStorage: Sendable {
    public static let logName = "log"
    public static let snapshotName = "snapshot"

    public let directory: String
    public let logPath: String
    public let snapshotPath: String
    /// The state found on open: start the replica from it.
    public let recovered: RaftDurableState
    /// What opening dropped from the log's tail (a torn write), if anything: worth a log
    /// line, never an error.
    public let droppedTail: String?

    private let disk: any Disk

    private struct Inner: Sendable {
        var state: RaftDurableState
        var pending: [RaftWrite] = []
        var usable = true
    }

    private let inner: Mutex<Inner>

    /// Opens the group's storage in `directory` on `disk`, creating the directory and an
    /// empty log if needed, and recovers its state. `rewritingWhatItReads`: then writes
    /// the state it recovered again, snapshot and log, each to a new file flushed and
    /// renamed over the old, before anyone uses it. For a storage opened again in the
    /// process whose write or flush failed: what it reads may be pages the kernel holds
    /// but never wrote (a failed flush may leave them marked clean), which a crash would
    /// lose after the replica counted them as held. A full disk fails the rewrite, and
    /// the storage with it.
    public init(directory: String, disk: any Disk = RealDisk(), rewritingWhatItReads: Bool = false) throws(RaftStorageError) {
        self.directory = directory
        self.disk = disk
        logPath = DiskPath.join(directory, Self.logName)
        snapshotPath = DiskPath.join(directory, Self.snapshotName)
        let logPath = logPath
        let snapshotPath = snapshotPath
        let (snapshotBytes, logBytes) = try Self.io { () throws(DiskError) in
            try disk.makeDirectory(directory)
            try disk.remove(logPath + ".tmp")
            try disk.remove(snapshotPath + ".tmp")
            return (try disk.read(snapshotPath), try disk.read(logPath))
        }
        let recovery = try RaftLogFormat.recover(log: logBytes ?? [], snapshot: snapshotBytes, logName: logPath, snapshotName: snapshotPath)
        try Self.io { () throws(DiskError) in
            if let logBytes, recovery.validLogLength < logBytes.count {
                try disk.truncate(logPath, to: recovery.validLogLength)
                try disk.sync(logPath)
            }
            if logBytes == nil {
                try disk.append([], to: logPath)
                try disk.syncDirectory(directory)
            }
            if rewritingWhatItReads {
                if let snapshot = recovery.state.snapshot { try disk.replace(snapshotPath, with: RaftLogFormat.snapshotFile(snapshot)) }
                try disk.replace(logPath, with: RaftLogFormat.compactedLog(for: recovery.state))
            }
        }
        recovered = recovery.state
        droppedTail = recovery.droppedTail
        inner = Mutex(Inner(state: recovery.state))
    }

    /// Runs `body`, its disk failure told as the storage's.
    private static func io<Value>(_ body: () throws(DiskError) -> Value) throws(RaftStorageError) -> Value {
        do throws(DiskError) {
            return try body()
        } catch {
            throw .io(operation: error.operation, file: error.path, errno: error.code)
        }
    }

    /// The state as written so far (durable once `sync` returns).
    public var state: RaftDurableState { inner.withLock { $0.state } }

    /// Applies `write`; buffered until `sync` unless it carries a newer snapshot, which
    /// is made durable at once together with everything buffered.
    public func write(_ write: RaftWrite) throws(RaftStorageError) {
        try inner.withLock { (inner: inout Inner) throws(RaftStorageError) in
            guard inner.usable else { throw .unusable(file: logPath) }
            let newSnapshot = write.snapshot.map { $0.index > (inner.state.snapshot?.index ?? 0) } ?? false
            inner.state.apply(write)
            guard newSnapshot, let snapshot = inner.state.snapshot else { return inner.pending.append(write) }
            do throws(RaftStorageError) {
                try Self.io { () throws(DiskError) in
                    try disk.replace(snapshotPath, with: RaftLogFormat.snapshotFile(snapshot))
                    try disk.replace(logPath, with: RaftLogFormat.compactedLog(for: inner.state))
                }
                inner.pending = []
            } catch {
                inner.usable = false
                throw error
            }
        }
    }

    /// Makes every buffered write durable with one append and one `fdatasync`, and
    /// returns the position of the last entry the storage now holds durably.
    @discardableResult
    public func sync() throws(RaftStorageError) -> RaftLogPosition {
        try inner.withLock { (inner: inout Inner) throws(RaftStorageError) in
            guard inner.usable else { throw .unusable(file: logPath) }
            if let record = RaftLogFormat.record(for: inner.pending) {
                do throws(RaftStorageError) {
                    try Self.io { () throws(DiskError) in
                        try disk.append(record, to: logPath)
                        try disk.sync(logPath)
                    }
                } catch {
                    inner.usable = false
                    throw error
                }
            }
            inner.pending = []
            return inner.state.lastPosition
        }
    }

    /// Closes the log file; buffered writes not yet synced are lost, as in a crash.
    public func close() {
        inner.withLock { $0.usable = false }
    }
}
