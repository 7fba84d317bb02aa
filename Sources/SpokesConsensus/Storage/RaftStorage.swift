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

    private struct Inner: Sendable {
        var fd: Int32
        var state: RaftDurableState
        var pending: [RaftWrite] = []
        var usable = true
    }

    private let inner: Mutex<Inner>

    /// Opens the group's storage in `directory`, creating the directory and an empty log
    /// if needed, and recovers its state.
    public init(directory: String) throws(RaftStorageError) {
        self.directory = directory
        logPath = RaftFiles.join(directory, Self.logName)
        snapshotPath = RaftFiles.join(directory, Self.snapshotName)
        try RaftFiles.makeDirectory(directory)
        try RaftFiles.remove(logPath + ".tmp")
        try RaftFiles.remove(snapshotPath + ".tmp")
        let snapshotBytes = try RaftFiles.read(snapshotPath)
        let logBytes = try RaftFiles.read(logPath)
        let recovery = try RaftLogFormat.recover(log: logBytes ?? [], snapshot: snapshotBytes, logName: logPath, snapshotName: snapshotPath)
        let fd = try RaftFiles.openForAppend(logPath)
        do throws(RaftStorageError) {
            if let logBytes, recovery.validLogLength < logBytes.count {
                try RaftFiles.truncate(fd, to: recovery.validLogLength, file: logPath)
                try RaftFiles.syncData(fd, file: logPath)
            }
            if logBytes == nil { try RaftFiles.syncDirectory(directory) }
        } catch {
            RaftFiles.closeFile(fd)
            throw error
        }
        recovered = recovery.state
        droppedTail = recovery.droppedTail
        inner = Mutex(Inner(fd: fd, state: recovery.state))
    }

    deinit { close() }

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
                try RaftFiles.replace(Self.snapshotName, in: directory, with: RaftLogFormat.snapshotFile(snapshot))
                try RaftFiles.replace(Self.logName, in: directory, with: RaftLogFormat.compactedLog(for: inner.state))
                RaftFiles.closeFile(inner.fd)
                inner.fd = -1
                inner.fd = try RaftFiles.openForAppend(logPath)
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
                    try RaftFiles.writeAll(inner.fd, record, file: logPath)
                    try RaftFiles.syncData(inner.fd, file: logPath)
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
        inner.withLock { inner in
            if inner.fd >= 0 { RaftFiles.closeFile(inner.fd) }
            inner.fd = -1
            inner.usable = false
        }
    }
}
