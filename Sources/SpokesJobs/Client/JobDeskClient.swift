import SpokesCluster
import SpokesConcurrency

/// A client of the nodes' job desks (``JobService``) for jobs already submitted, whatever
/// they run: lists the cluster's jobs (`spokes jobs`), cancels one (`spokes cancel`), and
/// finds one's stored report, waiting for a running one's end (`spokes result [--wait]`).
/// The command line and the simulator's whole nodes (`simulate-cluster --model nodes`)
/// both run it. It is not a member: `system` is a client's ``ClusterSystem``, every call
/// bounded by its call timeout.
///
/// The job layer knows no workload, so where a job's report is stored is asked through a
/// function the caller gives (``result(of:at:waiting:storedReport:onWaiting:)``): the bike
/// module's `StoredJobReport.find` asks the bike desk and then ``TaskJobs``.
public struct JobDeskClient: Sendable {
    /// The client's own actor system (not a member).
    public let system: ClusterSystem
    /// Seconds between two questions while waiting (``defaultPollInterval`` for the
    /// command line; the simulator's many clients ask less often).
    public let pollInterval: Double

    public init(system: ClusterSystem, pollInterval: Double = JobDeskClient.defaultPollInterval) {
        self.system = system
        self.pollInterval = pollInterval
    }

    /// The node listening at `address`: one the client is connected to already, else
    /// joined now (`join`, by default ``ClusterSystem/join(_:)``; the command line's turns
    /// a refusal into words).
    public func node(
        at address: SocketAddress, join: @Sendable (SocketAddress) async throws -> NodeID
    ) async throws -> NodeID {
        if let connected = system.connectedPeers.first(where: { $0.address == address.description }) { return connected.node }
        return try await join(address)
    }

    /// The node listening at `address`, joined with ``ClusterSystem/join(_:)`` if need be.
    public func node(at address: SocketAddress) async throws -> NodeID {
        let system = system
        return try await node(at: address) { try await system.join($0).node }
    }

    /// Every job of the cluster, running and stored, as `node` gathers them
    /// (``JobService/clusterJobs()``: each member within 2 s, the silent ones named).
    public func list(at node: NodeID) async throws -> JobService.ClusterJobs {
        try await JobService.resolve(id: ActorID(node: node, name: JobService.wellKnownName), using: system).clusterJobs()
    }

    /// Asks `node` to cancel `job` wherever it runs (``JobService/cancel(job:origin:)``:
    /// the coordinator waits up to 10 s for the job to end). Nil when no node runs it.
    public func cancel(_ job: String, at node: NodeID, origin: JobService.CancelOrigin = .command) async throws -> JobService.Cancellation? {
        try await JobService.resolve(id: ActorID(node: node, name: JobService.wellKnownName), using: system).cancel(job: job, origin: origin)
    }

    /// How a client waits for a job that runs.
    public enum Waiting: Sendable, Hashable {
        /// It does not: a running job is answered ``JobResult/running(_:)``.
        case no
        /// Until the job ends, stalls or is lost; with a bound, at most that many seconds
        /// of the job running (then ``JobResult/stillRunning(_:waited:)``). Nil: the job's
        /// own end is the bound (its tasks have deadlines and bounded retries), as
        /// `spokes result --wait` waits.
        case untilEnd(atMost: Double?)

        var waits: Bool { self != .no }
    }

    /// What the cluster says of a job asked for its result.
    public enum JobResult<Report: Sendable>: Sendable {
        /// Its stored report.
        case report(Report)
        /// It runs (not waited for): where, and how far it has come.
        case running(JobService.JobLocation)
        /// It stayed stalled for ``JobDeskClient/stalledPatience`` seconds: too few of its
        /// replicas can take part, which no client can change.
        case stalled(node: String, reason: String)
        /// Its node lists it as ended, and its store has no report of it (asked three times).
        case notStored(node: String)
        /// No node asked knows it.
        case unknown
        /// It still ran when the wait's bound passed.
        case stillRunning(JobService.JobLocation, waited: Double)
    }

    /// Seconds a job must stay listed as stalled before the client says so and stops.
    public static let stalledPatience = 3.0
    /// Seconds a waiting client asks again for a job no node knows yet: just after a
    /// restart a replicated job is known only once its replicas have elected a leader
    /// (about a second).
    public static let unknownPatience = 5.0
    /// Seconds between two questions while waiting, as `spokes result --wait` asks.
    public static let defaultPollInterval = 0.25
    /// Seconds in a row a waiting client may fail to reach the node its job is on (the
    /// node it asks first still locating the job there) before it says so and stops.
    public static let unreachablePatience = 10.0

    /// Finds `job`'s stored report, asking the node at `target` (which locates the job on
    /// the member that coordinates or stored it, and asks there). A job that runs is
    /// answered at once, or waited for (`waiting`): `onWaiting` hears where, once. The
    /// report is asked with `storedReport` (nil: the node has none), and every node
    /// through `join` (see ``node(at:join:)``).
    ///
    /// Every wait is bounded and answered with what it found: a job no node knows after
    /// ``unknownPatience`` seconds is ``JobResult/unknown``; one stalled for
    /// ``stalledPatience`` seconds is ``JobResult/stalled(node:reason:)``; a finished job
    /// found through at most three hops, or ``JobResult/notStored(node:)``; a running one
    /// until the bound `waiting` gives. A question that fails throws (the node's words);
    /// while waiting, one to the job's node is asked of `target` again, until
    /// ``unreachablePatience`` seconds have passed (``JobNodeUnreachable``).
    public func result<Report: Sendable>(
        of job: String, at target: SocketAddress, waiting: Waiting,
        join: @escaping @Sendable (SocketAddress) async throws -> NodeID,
        storedReport: @escaping @Sendable (_ job: String, _ node: NodeID, _ system: ClusterSystem) async throws -> Report?,
        onWaiting: @Sendable (JobService.JobLocation) -> Void = { _ in }
    ) async throws -> JobResult<Report> {
        let runtime = system.runtime
        let ask: @Sendable (SocketAddress) async throws -> Found<Report> = { [self] address in
            let node = try await node(at: address, join: join)
            if let report = try await storedReport(job, node, system) { return .report(report) }
            let service = try JobService.resolve(id: ActorID(node: node, name: JobService.wellKnownName), using: system)
            return try await service.locate(job: job).map { .elsewhere($0) } ?? .unknown
        }
        var found = try await ask(target)
        let patience = runtime.now + Self.unknownPatience
        while case .unknown = found, waiting.waits, runtime.now < patience {
            try await runtime.sleep(for: pollInterval)
            found = try await ask(target)
        }
        var waited = false
        var hops = 0
        var stalledSince: Double?
        var waitingSince: Double?
        var unreachableSince: Double?
        while case .elsewhere(let location) = found {
            // A stalled job waits for a majority of its replicas, which no client can bring
            // back: once it stays stalled for a while (a node cut off from the rest sees
            // its peers dead while they run the job on), say so, naming them, and stop
            // (issue 29 §2).
            if location.summary.state == .stalled {
                let since = stalledSince ?? runtime.now
                stalledSince = since
                if runtime.now - since >= Self.stalledPatience {
                    return .stalled(node: location.node, reason: location.summary.stalledReason ?? "too few of its replicas can take part")
                }
                try await runtime.sleep(for: pollInterval)
                found = try await ask(target)
                continue
            }
            stalledSince = nil
            // A finished job is a hop or two away; only waiting on a running one loops on.
            // (Not while its node does not answer: that is bounded by unreachablePatience,
            // and ends in JobNodeUnreachable, which says where to ask.)
            if location.summary.state != .running && unreachableSince == nil { hops += 1 }
            guard hops <= 3 else { break }
            if location.summary.state == .running {
                guard case .untilEnd(let atMost) = waiting else { return .running(location) }
                if !waited { onWaiting(location) }
                waited = true
                let since = waitingSince ?? runtime.now
                waitingSince = since
                if let atMost, runtime.now - since >= atMost { return .stillRunning(location, waited: runtime.now - since) }
                try await runtime.sleep(for: pollInterval)
            }
            let address = try SocketAddress(parsing: location.address)
            var next: Found<Report>
            do {
                next = try await ask(address)
                unreachableSince = nil
            } catch where waiting.waits && address != target && !(error is CancellationError) {
                // The job's node does not answer this client (it died, is cut off, or
                // the job moved on): the node asked first locates it again (a member
                // that took it over, or stored it). Before, the client failed at once
                // while the job ran on (simulate-cluster --model nodes, seed 15), also
                // when that node had listed the job ended as its coordinator was deposed
                // (--nodes 5, seed 787).
                let since = unreachableSince ?? runtime.now
                unreachableSince = since
                if runtime.now - since >= Self.unreachablePatience {
                    throw JobNodeUnreachable(job: job, node: location.node, address: location.address, seconds: runtime.now - since, reason: "\(error)")
                }
                try await runtime.sleep(for: pollInterval)
                found = try await ask(target)
                continue
            }
            // Listed as finished but no report on its node: it may have ended between the
            // two questions (ask again), or the store could not keep it, or that node
            // stopped coordinating it and another takes it over (a deposed coordinator
            // lists its end; the node asked first locates the job where it runs on). A
            // waiting client gives a take-over ``unknownPatience`` seconds.
            var asked = 1
            let endedSince = runtime.now
            while case .elsewhere(let moved) = next, moved.node == location.node, moved.summary.state != .running {
                guard asked < 3 || (waiting.waits && runtime.now - endedSince < Self.unknownPatience) else {
                    let again = try await ask(target)
                    if case .elsewhere(let other) = again, other.node == location.node { return .notStored(node: location.node) }
                    if case .unknown = again { return .notStored(node: location.node) }
                    next = again
                    break
                }
                asked += 1
                try await runtime.sleep(for: pollInterval)
                do {
                    next = try await ask(address)
                } catch where waiting.waits && address != target && !(error is CancellationError) {
                    // Gone quiet since (as above): the node asked first locates it again.
                    next = try await ask(target)
                    break
                }
            }
            found = next
        }
        if case .report(let report) = found { return .report(report) }
        return .unknown
    }

    /// ``result(of:at:waiting:join:storedReport:onWaiting:)`` joining nodes with
    /// ``ClusterSystem/join(_:)``.
    public func result<Report: Sendable>(
        of job: String, at target: SocketAddress, waiting: Waiting,
        storedReport: @escaping @Sendable (_ job: String, _ node: NodeID, _ system: ClusterSystem) async throws -> Report?,
        onWaiting: @Sendable (JobService.JobLocation) -> Void = { _ in }
    ) async throws -> JobResult<Report> {
        let system = system
        return try await result(of: job, at: target, waiting: waiting, join: { try await system.join($0).node }, storedReport: storedReport, onWaiting: onWaiting)
    }

    /// The stored report of a job of tasks on `node` (``TaskJobs/report(of:)``), for
    /// ``result(of:at:waiting:storedReport:onWaiting:)``.
    @Sendable public static func taskJobReport(of job: String, on node: NodeID, using system: ClusterSystem) async throws -> TaskJobReport? {
        try await TaskJobs.resolve(id: ActorID(node: node, name: TaskJobs.wellKnownName), using: system).report(of: job)
    }

    /// A waiting client could not reach the node its job is on for
    /// ``JobDeskClient/unreachablePatience`` seconds in a row, while the node it asks first
    /// located the job there.
    public struct JobNodeUnreachable: Error, Sendable, Hashable, CustomStringConvertible {
        public var job: String
        public var node: String
        public var address: String
        public var seconds: Double
        public var reason: String

        public var description: String {
            "job \(job) is on \(node) at \(address), which this client could not reach for \(Int(seconds)) s (\(reason)); "
                + "'spokes result \(job) --wait --to \(address)' asks it directly"
        }
    }

    /// What one node knows of a job: its stored report, where in the cluster it is, or
    /// nothing.
    private enum Found<Report: Sendable>: Sendable {
        case report(Report)
        case elsewhere(JobService.JobLocation)
        case unknown
    }
}
