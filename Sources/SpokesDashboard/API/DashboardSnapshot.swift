import SpokesCluster

/// Everything the dashboard page shows at one moment: the body of `GET /api/snapshot`
/// and of every `snapshot` event on `GET /api/events`.
///
/// Times (`time`, and a task's `start` and `end`) are seconds on the serving node's
/// monotonic clock. Task spans from other nodes are moved onto that clock when they
/// are gathered (their clock offset is measured on each poll), so one timeline can
/// show every node without the machines' clocks agreeing.
///
/// The JSON keys are what the page's script reads: add keys, never rename them.
public struct DashboardSnapshot: Sendable, Hashable, Codable {
    /// The node serving the dashboard.
    public var node: String
    public var cluster: String
    /// Now, on the serving node's monotonic clock.
    public var time: Double
    /// The serving node first, then every member it knows, by name.
    public var members: [MemberView]
    /// Running jobs first (newest first), then recently finished ones (newest first).
    public var jobs: [JobView]
    /// Task attempts that ran on any node in the last ``DashboardSnapshot/timelineSeconds``,
    /// and those running now.
    public var tasks: [TaskSpanView]
    /// The replicated groups (jobs kept in Raft groups) the answering members hold, one
    /// view per group, by id: of the views its replicas gave, the most informed
    /// (``ReplicaGroupView/mostInformed(_:)``). Where each job's leader and replicas are.
    public var groups: [ReplicaGroupView]
    /// Changes of a group's leader seen in the last ``DashboardSnapshot/failoverSeconds``,
    /// oldest first (see ``ClusterTimeline/observeGroups(_:at:)``).
    public var failovers: [FailoverView]

    /// How far back the task stream reaches.
    public static let timelineSeconds = 60.0
    /// How far back ``failovers`` reach.
    public static let failoverSeconds = 600.0

    public init(
        node: String, cluster: String, time: Double, members: [MemberView], jobs: [JobView], tasks: [TaskSpanView],
        groups: [ReplicaGroupView] = [], failovers: [FailoverView] = []
    ) {
        self.node = node
        self.cluster = cluster
        self.time = time
        self.members = members
        self.jobs = jobs
        self.tasks = tasks
        self.groups = groups
        self.failovers = failovers
    }
}

/// A replicated group's leader changed to another node: the old one died or was cut off
/// and the replicas elected a new one (for a job's group, the new leader takes the job over).
public struct FailoverView: Sendable, Hashable, Codable, CustomStringConvertible {
    /// When the dashboard first saw the new leader, on the serving node's clock.
    public var time: Double
    /// The group's id, e.g. `taskjob-map-0a3f442b`.
    public var group: String
    /// The job the group keeps; nil for a group that keeps none.
    public var job: String?
    /// The leader seen before (there may have been none in between, during the election).
    public var from: String
    /// The new leader.
    public var to: String
    /// The new leader's term.
    public var term: Int

    public init(time: Double, group: String, job: String?, from: String, to: String, term: Int) {
        self.time = time
        self.group = group
        self.job = job
        self.from = from
        self.to = to
        self.term = term
    }

    /// `job map-1: leader n1 -> n3 (term 4)`, as the page writes it.
    public var description: String {
        "\(job.map { "job \($0)" } ?? "group \(group)"): leader \(from) -> \(to) (term \(term))"
    }
}

/// One member of the cluster, as the dashboard's table shows it.
public struct MemberView: Sendable, Hashable, Codable {
    public var name: String
    /// `host:port` of its cluster port.
    public var address: String
    /// `alive`, `suspect`, `dead`, `left` or `joining`.
    public var state: String
    /// True for the node serving the dashboard.
    public var isServing: Bool
    /// Its cpu slots (cpu tasks it runs at once).
    public var slots: Int
    /// Its waiting slots (waiting tasks it runs at once).
    public var waitingSlots: Int
    /// Cpu slots in use there now; nil when the node could not be asked.
    public var slotsInUse: Int?
    /// Waiting slots in use there now; nil when the node could not be asked.
    public var waitingSlotsInUse: Int?
    /// Task attempts running there now, of either cost; nil when the node could not be asked.
    public var running: Int?
    /// Task attempts that ended with a result there since it started.
    public var completed: Int?
    /// Task attempts that failed there since it started.
    public var failed: Int?
    /// Smoothed heartbeat round trip from the serving node, in milliseconds (nil for
    /// the serving node itself, and before the first heartbeat is answered).
    public var roundTripMilliseconds: Double?
    /// Seconds it has been up; nil when it could not be asked.
    public var uptime: Double?
    /// The task kinds it runs (`pi.sample v1`); nil when it could not be asked.
    public var kinds: [String]?

    public init(
        name: String, address: String, state: String, isServing: Bool, slots: Int, waitingSlots: Int = 0, inUse: TaskBudgets? = nil,
        completed: Int? = nil, failed: Int? = nil, roundTripMilliseconds: Double? = nil, uptime: Double? = nil, kinds: [TaskSchema]? = nil
    ) {
        self.kinds = kinds?.map { "\($0.name) v\($0.version)" }
        self.name = name
        self.address = address
        self.state = state
        self.isServing = isServing
        self.slots = slots
        self.waitingSlots = waitingSlots
        slotsInUse = inUse?.cpu
        waitingSlotsInUse = inUse?.waiting
        running = inUse?.total
        self.completed = completed
        self.failed = failed
        self.roundTripMilliseconds = roundTripMilliseconds
        self.uptime = uptime
    }
}

/// One job, running or recently finished, wherever it is coordinated.
public struct JobView: Sendable, Hashable, Codable {
    /// What a node's share of a job came to.
    public struct NodeShare: Sendable, Hashable, Codable {
        /// Tasks whose result this node produced.
        public var done: Int
        /// Tasks running there now.
        public var running: Int

        public init(done: Int, running: Int) {
            self.done = done
            self.running = running
        }
    }

    public var id: String
    /// `bikes.user` for a bike simulation; another task kind for a batch of tasks.
    public var kind: String
    /// A line for people, e.g. `BikeMi: 300 users x 10 paths`.
    public var title: String
    /// The node that coordinates it.
    public var coordinator: String
    /// `running`, `finished`, `cancelled` or `failed` (finished with failed tasks).
    public var state: String
    /// Tasks in the job (users, for a bike job).
    public var total: Int
    /// Tasks with an accepted result.
    public var done: Int
    /// Tasks whose every attempt failed.
    public var failed: Int
    /// Failed attempts so far (each was retried or ended its task).
    public var retries: Int
    /// Real seconds since it started (until it ended, once it has).
    public var elapsed: Double
    /// Tasks done per real second.
    public var rate: Double
    /// Seconds until the last task is likely done; nil before the first is, or once ended.
    public var estimatedRemaining: Double?
    /// Node name -> its share.
    public var perNode: [String: NodeShare]
    /// For a bike job: bikes at each station now (or at the end), in the order of
    /// `GET /api/jobs/{id}/stations`; nil for other jobs, or when the coordinator could not be asked.
    public var stationBikes: [Int]?
    /// A running job of tasks' owner, priority, budget (`cpu` or `waiting`), places in
    /// use and fair share of the cluster's slots of that budget, as `spokes jobs` shows
    /// them (issue 32); nil for a job without them (a bike job) and once ended.
    public var slots: JobSlots?

    public init(
        id: String, kind: String, title: String, coordinator: String, state: String, total: Int, done: Int, failed: Int,
        retries: Int, elapsed: Double, rate: Double, estimatedRemaining: Double?, perNode: [String: NodeShare],
        stationBikes: [Int]? = nil, slots: JobSlots? = nil
    ) {
        self.slots = slots
        self.id = id
        self.kind = kind
        self.title = title
        self.coordinator = coordinator
        self.state = state
        self.total = total
        self.done = done
        self.failed = failed
        self.retries = retries
        self.elapsed = elapsed
        self.rate = rate
        self.estimatedRemaining = estimatedRemaining
        self.perNode = perNode
        self.stationBikes = stationBikes
    }
}

/// One attempt of one task on one slot of one node: a bar of the task stream.
public struct TaskSpanView: Sendable, Hashable, Codable {
    public var node: String
    /// The slot (0-based) of that node it ran in: a row of the task stream.
    public var slot: Int
    public var job: String
    public var task: Int
    /// 1 for the first try; more for retries.
    public var attempt: Int
    /// When it started, on the serving node's clock (see ``DashboardSnapshot``).
    public var start: Double
    /// When it ended; nil while it runs.
    public var end: Double?
    /// `running`, `succeeded`, `failed` or `cancelled`.
    public var outcome: String

    public init(node: String, slot: Int, job: String, task: Int, attempt: Int, start: Double, end: Double?, outcome: String) {
        self.node = node
        self.slot = slot
        self.job = job
        self.task = task
        self.attempt = attempt
        self.start = start
        self.end = end
        self.outcome = outcome
    }
}

/// Where a bike job's stations are and how many docks each has: the body of
/// `GET /api/jobs/{id}/stations`. The page draws the map from it once, then colours
/// the stations from each snapshot's ``JobView/stationBikes``.
public struct StationsView: Sendable, Hashable, Codable {
    public struct Place: Sendable, Hashable, Codable {
        public var id: String
        public var name: String
        public var latitude: Double
        public var longitude: Double
        /// Docks, with or without a bike.
        public var capacity: Int
        /// Bikes there when the job started.
        public var bikesAtStart: Int

        public init(id: String, name: String, latitude: Double, longitude: Double, capacity: Int, bikesAtStart: Int) {
            self.id = id
            self.name = name
            self.latitude = latitude
            self.longitude = longitude
            self.capacity = capacity
            self.bikesAtStart = bikesAtStart
        }
    }

    public var job: String
    /// The network's name, e.g. `BikeMi`.
    public var network: String
    public var stations: [Place]

    public init(job: String, network: String, stations: [Place]) {
        self.job = job
        self.network = network
        self.stations = stations
    }
}
