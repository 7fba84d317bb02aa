import SpokesCluster

/// What one node tells a monitoring system about itself, as values: the body of
/// `GET /metrics` before it is text (``families``, then ``PrometheusText/render(_:)``).
/// Pure; ``NodeMetrics/gather(from:build:)`` reads the figures from a running node.
///
/// Every figure is this node's own, so scraping every node counts nothing twice: its
/// view of the membership, its slots and the task attempts its worker ran (by task kind),
/// the jobs it coordinates and their retries, what it turned away, what its connections
/// carried, its Raft replicas and how long its proposals took to commit. Labels take a
/// few fixed values (states, budgets, the task kinds it runs, kinds of rejection, roles),
/// never job or task ids. Docs/metrics.md lists every metric.
public struct NodeMetrics: Sendable, Hashable {
    /// The build a node runs, which `spokes_build_info` carries as labels.
    public struct Build: Sendable, Hashable {
        public var version: String
        /// The git commit, or `unknown`.
        public var commit: String
        /// The protocol versions it speaks, as `spokes version` writes them (`2`, `2 to 3`).
        public var protocolVersions: String

        public init(version: String, commit: String, protocolVersions: String) {
            self.version = version
            self.commit = commit
            self.protocolVersions = protocolVersions
        }

        /// A build that did not say what it is.
        public static let unknown = Build(version: "unknown", commit: "unknown", protocolVersions: "\(WireMessage.protocolVersion)")
    }

    public var cluster: String
    public var node: String
    public var build: Build
    /// Seconds since the node started.
    public var uptime: Double
    /// Members by state (`alive`, `suspect`, ...), this node included as alive.
    public var members: [String: Int]
    /// This node's slots of each budget.
    public var slots: TaskBudgets
    /// Its slots held by attempts running now.
    public var slotsInUse: TaskBudgets
    /// Attempts its worker ended (with a result, or an error or cancelled) or turned away
    /// busy since it started, by task kind: every kind it runs, zeros included.
    public var taskAttempts: [String: TaskAttemptCounts]
    /// Failed attempts of the jobs it coordinates that were started again, since it started.
    public var tasksRetried: Int
    /// Jobs it coordinates now.
    public var jobsRunning: Int
    /// Jobs it coordinated that ended, by how (`finished`, `cancelled`, `failed`).
    public var jobsEnded: [String: Int]
    /// Inputs it turned away, by ``Rejection`` raw value (every kind, zeros included).
    public var rejections: [String: Int]
    /// Frames and bytes its connections sent and received since it started.
    public var traffic: TrafficCounters.Counts
    /// Replicas of Raft groups held here, by this replica's role (`leader`, `follower`,
    /// ...); nil when the node's Raft host did not answer in time (the metric is left out).
    public var raftReplicas: [String: Int]?
    /// Seconds from each Raft proposal made here to its commit and apply; nil where the
    /// node runs no Raft host (the metric is left out).
    public var raftCommitLatency: LatencyHistogram.Snapshot?
    /// Resident memory of the process in bytes; nil where it cannot be read.
    public var residentMemoryBytes: Double?
    /// CPU time the process used, user and system, in seconds; nil where it cannot be read.
    public var cpuSeconds: Double?

    public init(
        cluster: String, node: String, build: Build = .unknown, uptime: Double, members: [String: Int], slots: TaskBudgets, slotsInUse: TaskBudgets,
        taskAttempts: [String: TaskAttemptCounts], tasksRetried: Int, jobsRunning: Int, jobsEnded: [String: Int], rejections: [String: Int],
        traffic: TrafficCounters.Counts, raftReplicas: [String: Int]?, raftCommitLatency: LatencyHistogram.Snapshot?,
        residentMemoryBytes: Double?, cpuSeconds: Double?
    ) {
        self.cluster = cluster
        self.node = node
        self.build = build
        self.uptime = uptime
        self.members = members
        self.slots = slots
        self.slotsInUse = slotsInUse
        self.taskAttempts = taskAttempts
        self.tasksRetried = tasksRetried
        self.jobsRunning = jobsRunning
        self.jobsEnded = jobsEnded
        self.rejections = rejections
        self.traffic = traffic
        self.raftReplicas = raftReplicas
        self.raftCommitLatency = raftCommitLatency
        self.residentMemoryBytes = residentMemoryBytes
        self.cpuSeconds = cpuSeconds
    }

    /// Member states, in the order they are exported (every one, zeros included).
    public static let memberStates = ["joining", "alive", "suspect", "dead", "left"]
    /// The two budgets a task takes a slot of.
    public static let budgets = ["cpu", "waiting"]
    /// How a job ends.
    public static let jobEndings = ["finished", "cancelled", "failed"]
    /// A Raft replica's roles.
    public static let raftRoles = ["leader", "follower", "preCandidate", "candidate"]

    /// The metrics, in the order `GET /metrics` lists them.
    public var families: [MetricFamily] {
        var families = [
            MetricFamily("spokes_build_info", .gauge, help: "The build this node runs: always 1, with its version, commit and protocol versions as labels.",
                         samples: [MetricFamily.Sample([.init("version", build.version), .init("commit", build.commit),
                                                        .init("protocol_versions", build.protocolVersions)], 1)]),
            MetricFamily("spokes_node_info", .gauge, help: "This node: always 1, with its cluster and name as labels.",
                         samples: [MetricFamily.Sample([.init("cluster", cluster), .init("node", node)], 1)]),
            MetricFamily("spokes_uptime_seconds", .gauge, help: "Seconds since this node started.", value: uptime),
            MetricFamily("spokes_members", .gauge, help: "Members of the cluster as this node sees them, by state; this node counts as alive.",
                         label: "state", values: Self.memberStates + Self.extra(members, beyond: Self.memberStates), counts: members.mapValues(Double.init)),
            MetricFamily("spokes_slots", .gauge, help: "This node's slots: cpu tasks and waiting tasks it runs at once.",
                         samples: [.init("budget", "cpu", Double(slots.cpu)), .init("budget", "waiting", Double(slots.waiting))]),
            MetricFamily("spokes_slots_in_use", .gauge, help: "This node's slots held by task attempts running now.",
                         samples: [.init("budget", "cpu", Double(slotsInUse.cpu)), .init("budget", "waiting", Double(slotsInUse.waiting))]),
            MetricFamily("spokes_tasks", .gauge, help: "Task attempts on this node's worker now, by state.",
                         samples: [.init("state", "running", Double(slotsInUse.total))]),
            MetricFamily("spokes_task_attempts_total", .counter,
                         help: "Task attempts this node's worker ended since it started, by task kind and outcome: succeeded, failed (an error or cancelled), busy (turned away, every slot and queue place taken).",
                         samples: taskAttempts.keys.sorted().flatMap { kind in
                             let counts = taskAttempts[kind] ?? TaskAttemptCounts()
                             return [("succeeded", counts.succeeded), ("failed", counts.failed), ("busy", counts.busy)].map { outcome, count in
                                 MetricFamily.Sample([.init("kind", kind), .init("outcome", outcome)], Double(count))
                             }
                         }),
            MetricFamily("spokes_task_retries_total", .counter,
                         help: "Failed task attempts of the jobs this node coordinates that were started again, since it started.", value: Double(tasksRetried)),
            MetricFamily("spokes_jobs", .gauge, help: "Jobs this node coordinates now, by state.",
                         samples: [.init("state", "running", Double(jobsRunning))]),
            MetricFamily("spokes_jobs_ended_total", .counter, help: "Jobs this node coordinated that ended since it started, by how they ended.",
                         label: "state", values: Self.jobEndings + Self.extra(jobsEnded, beyond: Self.jobEndings), counts: jobsEnded.mapValues(Double.init)),
            MetricFamily("spokes_rejections_total", .counter, help: "Input this node turned away since it started, by kind (SECURITY.md lists them).",
                         label: "kind", values: rejections.keys.sorted(), counts: rejections.mapValues(Double.init)),
            MetricFamily("spokes_connection_bytes_total", .counter,
                         help: "Bytes this node's cluster connections (TCP, to members and clients) carried since it started, by direction; frames as sent on the wire.",
                         samples: [.init("direction", "sent", Double(traffic.bytesSent)), .init("direction", "received", Double(traffic.bytesReceived))]),
            MetricFamily("spokes_connection_frames_total", .counter,
                         help: "Frames (messages) this node's cluster connections carried since it started, by direction.",
                         samples: [.init("direction", "sent", Double(traffic.framesSent)), .init("direction", "received", Double(traffic.framesReceived))]),
        ]
        if let raftReplicas {
            families.append(MetricFamily("spokes_raft_replicas", .gauge, help: "Replicas of Raft groups (replicated jobs) this node holds, by its role in the group.",
                                         label: "role", values: Self.raftRoles + Self.extra(raftReplicas, beyond: Self.raftRoles),
                                         counts: raftReplicas.mapValues(Double.init)))
        }
        if let raftCommitLatency {
            families.append(.histogram("spokes_raft_commit_seconds",
                                       help: "Seconds from a Raft proposal made on this node (a replicated job's change, while it leads the group) to its commit and apply.",
                                       raftCommitLatency))
        }
        if let residentMemoryBytes {
            families.append(MetricFamily("spokes_process_resident_memory_bytes", .gauge, help: "Resident memory of this node's process in bytes.",
                                         value: residentMemoryBytes))
        }
        if let cpuSeconds {
            families.append(MetricFamily("spokes_process_cpu_seconds_total", .counter, help: "CPU time this node's process used, user and system, in seconds.",
                                         value: cpuSeconds))
        }
        return families
    }

    /// The exposition `GET /metrics` answers.
    public var text: String { PrometheusText.render(families) }

    /// Keys of `counts` not among `known`, sorted: a state this build does not list still
    /// gets its series.
    private static func extra(_ counts: [String: Int], beyond known: [String]) -> [String] {
        counts.keys.filter { !known.contains($0) }.sorted()
    }
}
