import Synchronization

extension ClusterSettings {
    /// Every setting, in `cluster.yaml` order: the one list the YAML keys, the `SPOKES_*`
    /// variables, the defaults and ranges of `--help` and the check of `cluster.yaml`
    /// come from: the cluster's own (``clusterTable``), then those the program's workload
    /// modules declared (``declare(_:)``). A setting added to either is known everywhere
    /// at once.
    public static var table: [Setting] { clusterTable + declared.withLock { $0 } }

    /// Settings a workload module declares (the bike workload's job limits), added once
    /// at start by the program that links it (``declare(_:)``).
    private static let declared = Mutex<[Setting]>([])

    /// Adds a workload module's settings after the cluster's own, so files, variables and
    /// flags know them. The program that links the module declares them before it loads
    /// any settings (`spokes` does so in `SpokesTool`); declaring a path again changes
    /// nothing, and a path the cluster itself has is never declared over.
    public static func declare(_ settings: [Setting]) {
        let own = Set(clusterTable.map(\.path))
        declared.withLock { declared in
            for setting in settings where !own.contains(setting.path) && !declared.contains(where: { $0.path == setting.path }) {
                declared.append(setting)
            }
        }
    }

    /// Settings a release removed, by YAML path, with why and what to do instead: a file,
    /// variable or flag that still names one is refused with those words, never silently
    /// ignored (a workload module declares its own, ``declareRemoved(_:)``).
    public static var removedSettings: [String: String] { removed.withLock { $0 } }

    private static let removed = Mutex<[String: String]>([:])

    /// Adds a workload module's removed settings (path: why), as ``declare(_:)`` does.
    public static func declareRemoved(_ settings: [String: String]) {
        removed.withLock { $0.merge(settings) { first, _ in first } }
    }

    /// The cluster's own settings, in `cluster.yaml` order.
    public static let clusterTable: [Setting] = [
        .name("cluster", \.cluster, doc: "nodes only talk to nodes with the same cluster name"),
        .text("node.name", \.nodeName, doc: "unique name of this node; empty: node-<random>"),
        .ipv4("node.host", \.host, doc: "IPv4 address to listen on; loopback keeps the node on this machine"),
        .port("node.port", \.port, from: 0, doc: "TCP port to listen on; 0: any free port"),
        .text("node.advertise", \.advertise, doc: "HOST:PORT other nodes should use for this one (NAT, containers); \"\": where it listens"),
        .slotCount("node.slots", \.cpuSlots, in: 1...10_000, doc: "cpu tasks this node runs at once; cores: one per core it may run on"),
        .integer("node.waiting_slots", \.waitingSlots, in: 1...100_000,
                 doc: "waiting tasks (they mostly sleep or await calls) this node runs at once"),
        .choice("discovery.mode", \.discoveryMode, doc: "loopback: this machine; lan: needs broadcast; off: peers only"),
        .port("discovery.port", \.discoveryPort, from: 1, doc: "UDP port for beacons, shared by all nodes of the cluster"),
        .seconds("discovery.interval", \.discoveryInterval, in: 0.01...3_600, doc: "seconds between beacons"),
        .ipv4("discovery.broadcast", \.broadcastAddress, allowingEmpty: true,
              doc: "where lan beacons go, e.g. the LAN's broadcast address 198.51.100.255; required for lan"),
        .addresses("peers", \.peers, doc: "host:port of nodes to dial, in every discovery mode, e.g. [198.51.100.20:7000]"),
        .seconds("heartbeat.interval", \.heartbeatInterval, in: 0.01...3_600,
                 doc: "seconds between heartbeats on each connection; less than suspect_after"),
        .seconds("heartbeat.suspect_after", \.suspectTimeout, in: 0.01...86_400,
                 doc: "seconds of silence before a peer is suspect; less than dead_after"),
        .seconds("heartbeat.dead_after", \.deadTimeout, in: 0.01...86_400,
                 doc: "seconds of silence before a peer is dead and its calls fail; a network glitch shorter than this less two heartbeat intervals costs no death"),
        .seconds("tasks.deadline", \.taskDeadline, in: 0.001...Setting.longestDuration,
                 doc: "seconds a task may run before it is cancelled and retried"),
        .integer("tasks.retries", \.taskRetries, in: 0...100, doc: "times a failed task is retried, each on another node"),
        .integer("jobs.keep", \.jobsKeep, in: 1...1_000_000, doc: "finished jobs a node's job store keeps; the oldest go first"),
        .integer("jobs.replicas", \.jobReplicas, in: 1...7,
                 doc: "nodes that keep each running job, so it outlives its coordinator; 1: only the coordinator"),
        .integer("jobs.max_priority", \.maximumPriority, in: JobShare.priorities,
                 doc: "highest --priority a job gets on this node (a job's weight among its owner's jobs); higher is lowered to this"),
        .seconds("jobs.replace_after", \.jobReplaceAfter, in: 0.01...Setting.longestDuration,
                 doc: "seconds a job's replica may sit on a dead node before an alive member replaces it"),
        .directory("data_directory", \.dataDirectory, doc: "where the node keeps its job records; ~ is $HOME"),
        .text("secret_file", \.secretFile, doc: "file holding the cluster secret, mode 600; relative to this file; \"\": none"),
        .text("accept_secret_files", \.acceptSecretFiles,
              doc: "more secrets' files this node accepts (a key rotation under way), comma-separated; \"\": none"),
        .optionalPort("dashboard.port", \.dashboardPort, doc: "the web dashboard's TCP port, e.g. 8787; 0: any free port; off: no dashboard"),
        .ipv4("dashboard.host", \.dashboardHost,
              doc: "where it listens; beyond loopback needs a cluster secret (it then asks for a token)"),
        .integer("limits.max_frame_bytes", \.maximumFrameSize, in: 1024...(1 << 30),
                 doc: "largest frame accepted from a peer, in bytes; 64 KiB before the handshake"),
        .seconds("limits.call_timeout", \.callTimeout, in: 0.001...Setting.longestDuration,
                 doc: "seconds a remote call may take before it fails"),
        .seconds("limits.handshake_timeout", \.handshakeTimeout, in: 0.001...3_600,
                 doc: "seconds to connect and finish the handshake; slower connections are closed"),
        .integer("limits.max_json_depth", \.maximumJSONDepth, in: 4...512, doc: "deepest JSON nesting accepted in a frame or call argument"),
        .integer("limits.max_array_length", \.maximumArrayLength, in: 16...100_000_000,
                 doc: "longest JSON array accepted in a frame or call argument"),
        .integer("limits.max_connections", \.maximumConnections, in: 1...1_000_000, doc: "connections that finished their handshake (members and clients), at once, in total"),
        .integer("limits.max_connections_per_address", \.maximumConnectionsPerAddress, in: 1...1_000_000,
                 doc: "connections that finished their handshake, at once, from one IP address"),
        .integer("limits.max_handshaking_connections", \.maximumHandshakingConnections, in: 1...1_000_000,
                 doc: "connections still in their handshake at once; when full the oldest is closed"),
        .integer("limits.max_calls_per_connection", \.maximumCallsPerConnection, in: 1...1_000_000,
                 doc: "calls one connection may have running on this node at once; at least both slot budgets and their queues"),
        .integer("limits.max_send_queue_bytes", \.maximumSendQueueBytes, in: 1024...(1 << 40),
                 doc: "bytes queued for a peer that does not read before it is dropped"),
    ]

    /// Keys and variables that were renamed, old to new: the loader refuses the old name
    /// with a message naming the new one.
    public static let renamedSettings = ["seeds": "peers"]

    /// The setting at `path`, if there is one.
    public static func setting(_ path: String) -> Setting? {
        table.first { $0.path == path }
    }

    /// The YAML path of every setting, in `cluster.yaml` order.
    public static var settingPaths: [String] { table.map(\.path) }
}
