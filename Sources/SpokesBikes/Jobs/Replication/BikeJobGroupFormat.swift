import SpokesCluster
import SpokesJobs
import SpokesReplication

extension BikeJobMachine {
    /// How releases before protocol 7 keep a bike job: a `bikejob-ID` group whose state is
    /// a ``BikeJobMachine`` (the job, its book, epochs), as a format only
    /// (``JobGroupFormat``, Docs/one-job-layer.md). The job desk writes a bike job this way
    /// while a member does not speak 7, so that member can hold it and take it over with
    /// its own coordinator; and it takes over and finishes the groups such a release made.
    ///
    /// The book is the workload's state (``BikeJobBook``), the group's epoch the run's. The
    /// desk's stream keeps only its events: the book records each user's end, so a task's
    /// end is read back from it (a user that ended runs no more).
    public static func format() -> JobGroupFormat {
        JobGroupFormat(
            kind: "bikejob", machine: { BikeJobMachine() }, keeps: { $0.workload?.name == BikeWorkload.name },
            start: { spec in
                guard let parameters = spec.workload?.parameters else { throw BikeWorkload.NotABikeJob(job: spec.id) }
                return start(try BikeWorkload.job(from: parameters), startedAt: spec.startedAt)
            },
            batch: { epoch, events, _ in events.map { record(eventsJSON: $0, epoch: epoch) } },
            takeOver: { takeOver(epoch: $0) }, cancel: { cancel($0) }, finish: finish,
            read: { machine, settings in
                guard let machine = machine as? BikeJobMachine else { return nil }
                return machine.groupState(settings: settings)
            },
            glance: { machine in
                (machine as? BikeJobMachine).map { JobGroups.JobState(job: $0.job?.id, finished: $0.finished, cancelled: $0.cancelReason != nil) }
            })
    }

    /// The job as the desk takes it over: its spec (the node's deadline and retries where
    /// the job has none), each user that ended as its task's end, the book as the
    /// workload's state. A job whose stations were sharded (release 0.2 or earlier) is not
    /// run on: it reads as cancelled, every user ended.
    func groupState(settings: ClusterSettings) -> JobGroupState {
        var state = JobGroupState(spec: nil, epoch: epoch, ends: [:], workloadState: book, cancelReason: cancelReason, finished: finished)
        guard let job, let book, var spec = try? job.taskJobSpec(settings: settings) else { return state }
        spec.startedAt = startedAt
        state.spec = spec
        state.ends = book.endedTasks()
        if wasSharded {
            // Its book holds no station of the shards: every user ends, cancelled.
            for (user, entry) in book.entries.enumerated() where state.ends[user] == nil {
                state.ends[user] = BikeJobBook.taskEnd(of: user, ending: .cancelled, entry: entry)
            }
            if state.cancelReason == nil { state.cancelReason = Self.shardedJobEnded }
        }
        return state
    }

    /// Why a job with sharded stations, taken over by this release, ends.
    static let shardedJobEnded = "its stations were sharded, which this release no longer runs (removed in 0.3): ended"
}
