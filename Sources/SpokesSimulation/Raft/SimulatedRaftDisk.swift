import SpokesConsensus

/// A replica's disk in the simulator: the bytes of its log and snapshot files, written
/// with the real `RaftLogFormat` and recovered through the same code as `RaftStorage`,
/// so a simulated crash exercises torn-tail handling for real.
struct SimulatedRaftDisk {
    private(set) var log: [UInt8] = []
    private(set) var snapshotFile: [UInt8]?
    /// What the files hold (what a restart recovers).
    private(set) var durable = RaftDurableState.empty

    /// A flush of `writes` completed: they are durable, as one appended record or, with
    /// a new snapshot, a new snapshot file and a rewritten log.
    mutating func commit(_ writes: [RaftWrite]) {
        let previousSnapshot = durable.snapshot?.index
        for write in writes { durable.apply(write) }
        if durable.snapshot?.index != previousSnapshot, let snapshot = durable.snapshot {
            snapshotFile = RaftLogFormat.snapshotFile(snapshot)
            log = RaftLogFormat.compactedLog(for: durable)
        } else if let record = RaftLogFormat.record(for: writes) {
            log += record
        }
    }

    /// What a crash left on the disk.
    struct CrashOutcome: CustomStringConvertible {
        /// For the trace.
        var description: String
        /// The flush in flight left a torn prefix of its record, which recovery dropped.
        var torn = false
    }

    /// The node crashed while `inFlight` was being flushed (if anything was): the flush
    /// may have left nothing, a torn prefix of its record, or all of it; a flush with a
    /// snapshot may have renamed the snapshot into place but not rewritten the log. Then
    /// the files are recovered as `RaftStorage` would (dropping a torn tail).
    mutating func crash(inFlight writes: [RaftWrite], random: inout SimulationRandom) throws(RaftStorageError) -> CrashOutcome {
        var outcome = "nothing in flight"
        var torn = false
        if !writes.isEmpty {
            var state = durable
            for write in writes { state.apply(write) }
            let choice = random.index(below: 3)
            if state.snapshot != durable.snapshot, let snapshot = state.snapshot {
                switch choice {
                case 0: outcome = "the flush with a snapshot was lost"
                case 1:
                    snapshotFile = RaftLogFormat.snapshotFile(snapshot)
                    outcome = "the snapshot was renamed into place, the log not rewritten"
                default:
                    commit(writes)
                    outcome = "the flush with a snapshot completed"
                }
            } else if let record = RaftLogFormat.record(for: writes) {
                switch choice {
                case 0: outcome = "the flush was lost"
                case 1:
                    let kept = random.integer(in: 1...(record.count - 1))
                    log += record.prefix(kept)
                    outcome = "the flush left \(kept) of \(record.count) bytes (torn)"
                    torn = true
                default:
                    log += record
                    outcome = "the flush's record reached the disk"
                }
            }
        }
        let recovery = try RaftLogFormat.recover(log: log, snapshot: snapshotFile, logName: "log", snapshotName: "snapshot")
        log = Array(log.prefix(recovery.validLogLength))
        durable = recovery.state
        if let dropped = recovery.droppedTail { outcome += "; recovery dropped \(dropped)" }
        return CrashOutcome(description: outcome, torn: torn)
    }
}
