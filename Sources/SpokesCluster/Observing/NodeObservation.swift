/// What one node tells the dashboard about itself: its counts, the task attempts it ran
/// since the caller last asked, the jobs it coordinates, its heartbeat round trips, and the
/// replicated groups it holds a replica of.
/// ``NodeStatus/observe(tasksAfter:)`` returns it.
public struct NodeObservation: Sendable, Hashable, Codable {
    public var node: String
    /// Now, on that node's monotonic clock: the reference for its task times.
    public var now: Double
    public var uptime: Double
    /// Its cpu slots.
    public var slots: Int
    /// Its waiting slots.
    public var waitingSlots: Int
    /// Its slots of each cost held by attempts running now.
    public var inUse: TaskBudgets
    /// Attempts running on its worker now, of either cost.
    public var running: Int { inUse.total }
    /// Attempts that ended with a result.
    public var succeeded: Int
    /// Attempts that ended with an error or were cancelled.
    public var failed: Int
    /// Attempts that ended after the sequence the caller gave, then the running ones.
    public var tasks: [TaskTimeline.Span]
    /// The caller passes this back next time.
    public var lastTaskSequence: UInt64
    /// Jobs it coordinates: running, then recently ended.
    public var jobs: [JobBoard.Record]
    /// Its smoothed heartbeat round trip to each connected peer, in seconds, by name.
    public var roundTrips: [String: Double]
    /// The task kinds its worker runs (nil from a node that does not say).
    public var kinds: [TaskSchema]?
    /// Its replicas of replicated groups (jobs kept in Raft groups), as it sees them, by
    /// group id (``ClusterNode/replicaGroups()``); nil from a node that does not say (an
    /// older version).
    public var replicaGroups: [ReplicaGroupView]?

    public init(
        node: String, now: Double, uptime: Double, slots: Int, waitingSlots: Int, inUse: TaskBudgets, succeeded: Int, failed: Int,
        tasks: [TaskTimeline.Span], lastTaskSequence: UInt64, jobs: [JobBoard.Record], roundTrips: [String: Double], kinds: [TaskSchema]? = nil,
        replicaGroups: [ReplicaGroupView]? = nil
    ) {
        self.kinds = kinds
        self.replicaGroups = replicaGroups
        self.node = node
        self.now = now
        self.uptime = uptime
        self.slots = slots
        self.waitingSlots = waitingSlots
        self.inUse = inUse
        self.succeeded = succeeded
        self.failed = failed
        self.tasks = tasks
        self.lastTaskSequence = lastTaskSequence
        self.jobs = jobs
        self.roundTrips = roundTrips
    }
}
