import FoundationEssentials

/// Everything a node needs to know to run. The defaults suit several nodes on one
/// machine; `cluster.yaml`, `SPOKES_*` environment variables and command-line flags
/// override them, in that order (see ``ClusterSettings/load(file:environment:)``).
/// ``ClusterSettings/table`` lists every setting once, with its key, range and doc line.
///
/// The cluster secret is loaded from `SPOKES_SECRET` or `secret_file`, never from a
/// flag (other users can read a process's arguments); see SECURITY.md.
public struct ClusterSettings: Sendable, Hashable {
    /// How nodes find each other besides `peers`.
    public enum DiscoveryMode: String, Sendable, Hashable, Codable, CaseIterable {
        /// Beacons to the loopback broadcast address: nodes on this machine only.
        case loopback
        /// Beacons to the broadcast address the user names: the LAN. Never a default.
        case lan
        /// No beacons; only `peers`.
        case off
    }

    /// Nodes only talk to nodes of the same cluster.
    public var cluster = "spokes"
    /// This node's name, unique in the cluster; empty picks `node-<random>`.
    public var nodeName = ""
    /// Address to listen on. Loopback by default: a LAN is an explicit choice.
    public var host = "127.0.0.1"
    /// TCP port; 0 picks any free port.
    public var port: UInt16 = 0
    /// `HOST:PORT` other nodes should use to reach this one, when it is not where it
    /// listens (behind NAT, in a container); empty: where it listens.
    public var advertise = ""
    /// How many cpu tasks (``TaskCost/cpu``) this node runs at once: one per core it may
    /// run on (the default, `cores`), or a number.
    public var cpuSlots = SlotCount.cores
    /// Cpu tasks this node runs at once: ``cpuSlots`` as a number (setting it sets a number).
    public var slots: Int {
        get {
            switch cpuSlots {
            case .cores: Self.coreCount
            case .fixed(let count): count
            }
        }
        set { cpuSlots = .fixed(newValue) }
    }
    /// Waiting tasks (``TaskCost/waiting``) this node runs at once: each mostly awaits
    /// sleeps or remote calls, so thousands fit; memory is the bound.
    public var waitingSlots = ClusterSettings.defaultWaitingSlots

    public var discoveryMode = DiscoveryMode.loopback
    /// UDP port shared by every node's beacons (several nodes per machine share it).
    public var discoveryPort: UInt16 = 7946
    /// Seconds between beacons.
    public var discoveryInterval = 0.25
    /// Where `lan` beacons go, e.g. the LAN's broadcast address; required for `lan`.
    public var broadcastAddress = ""
    /// Static peers to dial, `host:port`, in every discovery mode (`--peer`, `peers:`).
    public var peers: [String] = []

    /// The defaults, as one value: what the simulator's models start from, so a default
    /// changed here is the one they check.
    public static let defaults = ClusterSettings()

    /// Seconds between heartbeats on each connection.
    public var heartbeatInterval = 0.2
    /// Seconds of silence after which a peer is suspect.
    public var suspectTimeout = 0.6
    /// Seconds of silence after which a peer is dead and its calls fail. A network glitch
    /// shorter than this less two heartbeat intervals (1.2 s) costs no death: silence is
    /// counted from the last message before the cut, up to an interval earlier, and the
    /// first probe after the heal may come an interval late. 1.6 s, not 1.2 s: at 1.2 s
    /// a 1.0 s cut killed members (issue 29 §1.10), and one of 0.8 s sat on the bound.
    public var deadTimeout = 1.6

    /// Default seconds a task may run before it is cancelled and retried.
    public var taskDeadline = 30.0
    /// Default number of retries of a failed task.
    public var taskRetries = 3

    /// How many finished jobs a node's job store keeps (the oldest go first).
    public var jobsKeep = 1_000
    /// Nodes that keep each running job (a Raft group of the coordinator and this many
    /// minus one alive members); with fewer alive members, or 1, the coordinator alone
    /// keeps it, on its disk (jobs of tasks in its journal, bike jobs in a group of one).
    public var jobReplicas = 3
    /// The highest priority a job gets on this node (`jobs.max_priority`): what a
    /// submitter asks above it is lowered to it, on the coordinator and on each worker.
    public var maximumPriority = JobShare.priorities.upperBound
    /// Seconds a running job's replica may be on a dead node before the group's leader
    /// replaces it with an alive member (one change at a time, through the group's log).
    public var jobReplaceAfter = 30.0
    /// Where a node keeps its job records. `~` is the home directory (``HomeDirectory``).
    public var dataDirectory = "~/.spokes"

    /// A file holding the cluster secret (only its owner may read it); empty: none.
    /// A relative path is relative to the configuration file that names it.
    public var secretFile = ""
    /// The secret every member holds, from `SPOKES_SECRET` or ``secretFile``; nil runs
    /// an open cluster, which may only listen on loopback unless ``allowInsecure``.
    public var secret: ClusterSecret?
    /// Files of further secrets this node accepts besides ``secret`` (a rotation under
    /// way), comma-separated, each only its owner may read; relative to the configuration
    /// file. Empty: none.
    public var acceptSecretFiles = ""
    /// The secrets of ``acceptSecretFiles``, loaded with the secret.
    public var acceptedSecrets: [ClusterSecret] = []

    /// The keyring a node starts with: ``secret`` as primary, accepting
    /// ``acceptedSecrets`` too; nil in an open cluster.
    public var keyring: Keyring? { secret.map { Keyring(primary: $0, accepting: acceptedSecrets) } }
    /// Lets a node without a secret listen beyond loopback (`--insecure`); never from a file.
    public var allowInsecure = false
    /// For a client only (never a member): join the node it dials whatever its cluster,
    /// as when the user names a node's address but no cluster. The secret, where there is
    /// one, still decides who gets in. Never from a file.
    public var joinsAnyCluster = false

    /// TCP port of the node's web dashboard; nil (the default, `off`) serves none, 0
    /// picks a free port.
    public var dashboardPort: UInt16?
    /// Address the dashboard listens on. Loopback unless the user asks: beyond loopback
    /// it needs a cluster secret (or `--insecure`), like the node itself.
    public var dashboardHost = "127.0.0.1"

    /// The wire protocol versions this node speaks: ``ProtocolVersions/current`` always,
    /// but for tests that play a node of another release (not a setting of the table:
    /// no key, variable or flag).
    public var protocolVersions = ProtocolVersions.current

    /// Largest frame accepted from a peer, in bytes.
    public var maximumFrameSize = 8 * 1024 * 1024
    /// Seconds a remote call may take before it fails with a timeout.
    public var callTimeout = 30.0
    /// Seconds to establish a connection and exchange handshakes.
    public var handshakeTimeout = 3.0
    /// Deepest JSON nesting accepted in a frame or argument.
    public var maximumJSONDepth = 32
    /// Longest JSON array accepted in a frame or argument.
    public var maximumArrayLength = 100_000
    /// Connections that finished their handshake (members and clients), at once, in total.
    public var maximumConnections = 1024
    /// Connections that finished their handshake, at once, from one IP address.
    public var maximumConnectionsPerAddress = 128
    /// Inbound connections still in their handshake at once; when full, the oldest is
    /// closed to make room (see ``ClusterSystem``).
    public var maximumHandshakingConnections = 64
    /// Calls one connection may have running on this node at once. At least every place
    /// a coordinator may fill on this node over one connection (both budgets and their
    /// queues); see `checkRelations`.
    public var maximumCallsPerConnection = 4096
    /// Bytes waiting to be sent to one peer before it counts as not reading and is dropped.
    public var maximumSendQueueBytes = 64 * 1024 * 1024
    /// Whole-number settings a workload module declares for itself (the bike workload's
    /// job limits, `limits.max_users` ...: see ``Setting/workloadInteger(_:default:in:doc:)``),
    /// by YAML path; a path absent here has its declared default.
    public var workloadIntegers: [String: Int] = [:]

    /// The JSON shape limits of frames and arguments.
    public var jsonLimits: JSONShapeLimits {
        JSONShapeLimits(maximumDepth: maximumJSONDepth, maximumArrayLength: maximumArrayLength)
    }

    public init() {}

    /// A node's cpu slots: one per core, or a number.
    public enum SlotCount: Sendable, Hashable {
        /// One per core this process may run on (``ClusterSettings/coreCount``).
        case cores
        case fixed(Int)
    }

    /// The default of `node.waiting_slots`.
    public static let defaultWaitingSlots = 2_000

    /// The cores this process may run on: those of its CPU affinity mask (so a node
    /// pinned with `taskset -c 0` counts 1), at least 1 and at most `node.slots`' range.
    public static let coreCount: Int = {
        // Glibc's sched_getaffinity is not exported to Swift; the kernel says the same in
        // /proc/self/status as a hex mask, e.g. `Cpus_allowed:\tff` or `...,0000000f`.
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let mask = status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed:") }?.dropFirst("Cpus_allowed:".count)
        let counted = mask?.reduce(0) { $0 + ($1.hexDigitValue?.nonzeroBitCount ?? 0) } ?? 0
        return min(10_000, max(1, counted > 0 ? counted : ProcessInfo.processInfo.activeProcessorCount))
    }()
}
