import Distributed
import FoundationEssentials
import Glibc
import SpokesConcurrency
import Synchronization

/// A running node: the actor system, its member list, discovery, heartbeats, and the
/// well-known status actor. This is the "thin shell" around ``Membership``: it turns
/// sockets, beacons and time into observations and carries out the actions.
public final class ClusterNode: Sendable {
    public let system: ClusterSystem
    public var settings: ClusterSettings { system.settings }
    /// The task kinds this node runs; register an app's own before submitting.
    public let registry: TaskRegistry
    /// Running (per budget) and completed task counts of this node's worker.
    public let counters = TaskCounters()
    /// Seconds from a Raft proposal made on this node to its commit and apply, which the
    /// node's Raft host counts when it is given this (`spokes node` gives it): `GET /metrics`.
    public let raftCommitLatency = LatencyHistogram(bounds: LatencyHistogram.raftCommitBounds)
    /// How late each heartbeat tick came, beyond its interval: the measure of whether
    /// the node's own protocol waits behind user work (issue 33). Logged at stop.
    public let timerLateness = LatencyHistogram(bounds: LatencyHistogram.timerLatenessBounds)
    /// The attempts this node's worker ran lately: the dashboard's task stream.
    public let timeline: TaskTimeline
    /// The jobs this node coordinates: what the dashboard shows of them.
    public let jobBoard: JobBoard
    private let dashboardAddress = Mutex<String?>(nil)

    /// Where this node serves its dashboard (`http://host:port/`, no token), for `status`.
    public var dashboard: String? {
        get { dashboardAddress.withLock { $0 } }
        set { dashboardAddress.withLock { $0 = newValue } }
    }
    private let faults: ScanSystem.Faults
    private let hostedWorker = Mutex<ScanSystem?>(nil)
    /// Actors hosted on this node by the layers above (the job desks): kept alive while
    /// the node is (the actor system holds actors weakly).
    private let hostedActors = Mutex<[any DistributedActor]>([])
    /// What each member incarnation's worker runs, once asked (``kinds(of:)``).
    private let memberKinds = Mutex<[NodeID: [TaskSchema]]>([:])
    /// The coordinators' ``Systems`` this node made, held weakly: read by
    /// ``coordinatorSystems`` (the simulator's checks), never kept alive by it.
    private let madeSystems = Mutex<[WeakSystems]>([])

    private let membership: Mutex<Membership>
    /// How many observations the membership was handed (``observe(_:at:)``, the only
    /// way its members change): a reader that walked the members (``forEachMember(_:)``)
    /// when this was the same count has seen them as they stand. Bumped after each
    /// observation, so a count read before a walk never vouches for a change the walk
    /// missed.
    public let membershipChanges = ChangeCount()
    private let discovery: Discovery?
    /// Probes silent members over UDP (issue 21 §3); nil when the port was taken for UDP.
    private let prober: Mutex<Prober>
    private let probes: ProbeChannel?
    private let subscribers = Mutex<[Int: AsyncStream<MembershipEvent>.Continuation]>([:])
    /// The key of the next subscriber: subscribers hear events in the order they
    /// subscribed, the same every run.
    private let nextSubscriber = Atomic<Int>(0)
    private let tasks = Mutex<[Task<Void, Never>]>([])
    /// Set by ``stop()`` (and when the node yields its name): observations that still
    /// arrive (a beacon the discovery thread read just before it stopped) are dropped.
    private let stopped = Atomic<Bool>(false)
    private let started: Double
    private let status: Mutex<NodeStatus?> = Mutex(nil)
    private let loggedDialFailures = Mutex<Set<String>>([])
    /// What `spokes stop` asks for (``NodeStatus/stop()``); nil: this node cannot be stopped remotely.
    private let stopRequest = Mutex<LockedClosure<@Sendable () -> Void>?>(nil)
    private let nameConflictPromise = Promise<NameConflict, Never>()
    /// Where this node's replicated groups come from (``setReplicaGroups(_:)``).
    private let replicaGroupProvider = Mutex<LockedClosure<@Sendable () async -> [ReplicaGroupView]>?>(nil)

    /// Completes when a live member of the cluster turns out to have this node's name
    /// (see ``NameConflict``). The node has then stopped finding and greeting peers;
    /// whoever runs it should ``stop()`` it and exit (`spokes node` exits 1).
    public var nameConflict: Future<NameConflict, Never> { nameConflictPromise.future }

    /// The conflict, once there is one.
    public var nameTaken: NameConflict? {
        if case .success(let conflict)? = nameConflict.currentResult { return conflict }
        return nil
    }

    /// Lets clients stop this node (`spokes stop`): `action` runs once one asks.
    public func onStopRequest(_ action: @escaping @Sendable () -> Void) {
        stopRequest.withLock { $0 = LockedClosure(action) }
    }

    /// Tells this node how to list the replicated groups it holds a replica of (`spokes
    /// node` passes its Raft host's), so its dashboard and ``NodeStatus/observe(tasksAfter:)``
    /// show where each job's leader and replicas are. Replaces any earlier `provider`.
    public func setReplicaGroups(_ provider: @escaping @Sendable () async -> [ReplicaGroupView]) {
        replicaGroupProvider.withLock { $0 = LockedClosure(provider) }
    }

    /// Whether this node was told how to list its replicated groups: it runs a Raft host.
    public var hasReplicaGroups: Bool {
        replicaGroupProvider.withLock { $0 != nil }
    }

    /// This node's replicas of replicated groups now, by group id; none without a provider.
    public func replicaGroups() async -> [ReplicaGroupView] {
        guard let provider = replicaGroupProvider.withLock({ $0 }) else { return [] }
        return await provider.closure().sorted { $0.id < $1.id }
    }

    /// Binds the node's ports. Call ``start()`` to begin finding peers. The node logs to
    /// `logger` (by default nowhere), and reads time and sleeps through `runtime`.
    public init(
        settings: ClusterSettings, registry: TaskRegistry = TaskRegistry(), faults: ScanSystem.Faults = ScanSystem.Faults(), logger: Logger = .discard,
        runtime: Runtime = .real
    ) throws {
        self.registry = registry
        self.faults = faults
        system = try ClusterSystem(settings: settings, logger: logger, runtime: runtime)
        started = runtime.now
        timeline = TaskTimeline(clock: runtime.clock)
        let node = system.node
        jobBoard = JobBoard(coordinator: node.name, clock: runtime.clock)
        membership = Mutex(Membership(local: node, suspectTimeout: settings.suspectTimeout, deadTimeout: settings.deadTimeout))
        if settings.discoveryMode == .off {
            discovery = nil
        } else {
            discovery = try Discovery(settings: settings, keyring: system.keyring, beacon: system.handshake(), rejections: system.rejections, runtime: system.runtime)
        }
        prober = Mutex(Prober(
            local: node, probeAfter: Self.probeAfter(settings), probeInterval: settings.heartbeatInterval,
            seed: runtime.seed()))
        do {
            probes = try ProbeChannel(address: system.address, keyring: system.keyring, rejections: system.rejections, network: system.runtime.network)
        } catch {
            probes = nil
            system.log("no probes over UDP (\(error)): silent members are judged on their heartbeats alone")
        }
    }

    /// Seconds of silence before a member is probed over UDP: one and a half heartbeat
    /// intervals (a healthy member is never probed), and before its suspicion.
    static func probeAfter(_ settings: ClusterSettings) -> Double {
        min(settings.heartbeatInterval * 1.5, settings.suspectTimeout * 0.75)
    }

    /// Keeps `actor` (hosted on this node by a layer above, e.g. a job desk) alive as long
    /// as the node.
    public func keep(_ actor: any DistributedActor) {
        hostedActors.withLock { $0.append(actor) }
    }

    /// Runs `work` (a layer's background task on this node) until it ends or the node
    /// stops, which cancels it.
    public func adopt(_ work: Task<Void, Never>) {
        tasks.withLock { $0.append(work) }
    }

    /// Starts discovery, heartbeats, probes, the status actor and the worker. The layers
    /// above host their desks on it (the job layer's `TaskJobs.host(on:)`).
    public func start() {
        let hosted = ClusterSystem.withWellKnownName(NodeStatus.wellKnownName) {
            NodeStatus(actorSystem: system, report: { [weak self] in self?.statusReport() ?? [] },
                       observe: { [weak self] after in
                           guard let self else { return nil }
                           let groups = await self.replicaGroups()
                           return self.observation(tasksAfter: after, replicaGroups: groups)
                       },
                       stop: { [weak self] in self?.stopRequest.withLock { $0 }?.closure })
        }
        status.withLock { $0 = hosted }
        let counters = counters
        let worker = ClusterSystem.withWellKnownName(ScanSystem.wellKnownName) {
            ScanSystem(actorSystem: system, slots: settings.slots, waitingSlots: settings.waitingSlots, registry: registry, faults: faults,
                       counters: counters, timeline: timeline, maximumPriority: settings.maximumPriority)
        }
        hostedWorker.withLock { $0 = worker }
        probes?.start { [weak self] message, address in
            guard let self, !self.stopped.load(ordering: .acquiring) else { return }
            let actions = self.prober.withLock { $0.receive(message, from: address, at: system.runtime.now) }
            self.carryOut(actions)
        }
        discovery?.start(cluster: settings.cluster) { [weak self] beacon in
            self?.observe(.beacon(node: beacon.node, address: beacon.address, slots: beacon.slots, waitingSlots: beacon.waitingSlots,
                                  protocolVersions: beacon.protocolVersions))
        }
        let peerEvents = system.peerEventStream()
        let listening = Task { [weak self] in
            for await event in peerEvents {
                guard let self else { return }
                switch event {
                case .connected(let peer) where !peer.address.isEmpty:
                    self.observe(.connected(node: peer.node, address: peer.address, slots: peer.slots, waitingSlots: peer.waitingSlots,
                                            protocolVersions: peer.protocolVersions))
                    Task { await self.learnMembers(from: peer.node) }
                case .connected:
                    break
                case .disconnected(let node, _):
                    self.observe(.disconnected(node: node))
                case .left(let node):
                    self.observe(.left(node: node))
                case .nameTaken(let conflict):
                    self.yieldName(conflict)
                }
            }
        }
        let interval = settings.heartbeatInterval
        let seeds = settings.peers
        let learnEvery = max(1, Int((Self.memberListInterval / max(interval, 0.001)).rounded()))
        // On the protocol's thread (a real runtime's): ticks never wait behind user tasks.
        let ticking = system.runtime.protocolTask { [weak self] in
            var ticks = 0
            var lastTick: Double?
            while !Task.isCancelled {
                guard let self else { return }
                let now = self.system.runtime.now
                if let lastTick { self.timerLateness.observe(now - lastTick - interval) }
                lastTick = now
                ticks += 1
                if ticks % learnEvery == 0, let peer = self.members.filter({ $0.state == .alive }).randomElement() {
                    Task { await self.learnMembers(from: peer.node) }
                }
                self.system.sendHeartbeats()
                // The same last-received time again is no news (``Membership`` ignores it),
                // so only the peers heard from since the last tick are handed over.
                for (node, time) in self.system.heardSinceAsked() {
                    self.observe(.heard(node: node), at: time)
                }
                for seed in seeds { self.observe(.seed(address: seed)) }
                self.observe(.tick)
                self.probeSilentMembers()
                try? await self.system.runtime.protocolSleep(for: interval)
            }
        }
        tasks.withLock { $0 += [listening, ticking] }
    }

    /// Seconds between asking one random alive member for the members it knows (besides
    /// asking each member once when it connects): how a member that only one peer knows
    /// of reaches every node without discovery.
    public static let memberListInterval = 2.0

    /// Asks `node` (a member) for the members it knows and dials the alive ones this node
    /// does not know yet, as it dials its configured peers: one reachable peer is enough
    /// to join the whole cluster, and a newcomer spreads from there. At most
    /// `limits.max_connections` addresses are taken from one answer. Only where discovery
    /// is off or peers are configured.
    func learnMembers(from node: NodeID) async {
        // Beacons already tell every node of the others: learning from member lists too
        // would only add dials that race with the beacons' own (two connections, one
        // closed after the handshake timeout). It is for clusters joined through peers.
        guard settings.discoveryMode == .off || !settings.peers.isEmpty else { return }
        guard !stopped.load(ordering: .acquiring),
              let status = try? NodeStatus.resolve(id: ActorID(node: node, name: NodeStatus.wellKnownName), using: system),
              let listed = try? await withTimeout(seconds: 2, clock: system.runtime.clock, operation: { try await status.members() })
        else { return }
        let own = system.advertisedAddress.description
        let known = Set(members.filter { $0.state == .alive || $0.state == .suspect }.map(\.address))
        for member in listed.prefix(settings.maximumConnections)
        where member.state == Member.State.alive.rawValue && member.address != own && !known.contains(member.address) {
            observe(.seed(address: member.address))
        }
    }

    /// Announces leave to every peer and stops, returning once the goodbyes are sent
    /// (or after a second).
    public func stop() async {
        stopTimersAndDiscovery()
        await system.shutdown(flushingFor: 1)
    }

    /// Announces leave to every peer and stops, without waiting for the goodbyes to go out.
    public func stop() {
        stopTimersAndDiscovery()
        system.shutdown()
    }

    private func stopTimersAndDiscovery() {
        let wasStopped = stopped.exchange(true, ordering: .acquiringAndReleasing)
        if !wasStopped { logTimerLateness() }
        tasks.withLock { tasks in
            for task in tasks { task.cancel() }
            tasks.removeAll()
        }
        discovery?.stop()
        probes?.stop()
        // Finish outside the lock: finishing runs onTermination, which takes it.
        let finishing = subscribers.withLock { subscribers in
            defer { subscribers.removeAll() }
            return subscribers.sorted { $0.key < $1.key }.map(\.value)
        }
        for subscriber in finishing { subscriber.finish() }
    }

    /// This node's worker (nil before ``start()``).
    public var worker: ScanSystem? { hostedWorker.withLock { $0 } }

    /// The ``Systems`` of the coordinators this node runs now (one per running job that
    /// places tasks), read-only: what the simulator checks a coordinator's counts on.
    public var coordinatorSystems: [Systems] {
        madeSystems.withLock { made in
            made.removeAll { $0.systems == nil }
            return made.compactMap(\.systems)
        }
    }

    /// A coordinator's ``Systems``: this node's worker first, then every alive member's
    /// (with the budgets each announced), kept up to date from membership events until the
    /// returned task is cancelled. Every worker is offered, whatever it runs: for a job of
    /// one kind use ``makeSystems(for:schema:)``.
    public func makeSystems() throws -> (Systems, Task<Void, Never>) {
        let events = membershipEvents()
        return try systems(localOffered: true, events: events, initial: members.filter { $0.state == .alive }, accepts: { _ in true })
    }

    /// A coordinator's ``Systems`` for a job of `kind`: only the workers that run it at the
    /// job's version (``KindPlacement``: `schema` when the submitter runs the kind, else
    /// this node's, else the one most members run) are offered, this node's included only
    /// when it runs it; members that join later are asked what they run before they are
    /// offered. Throws ``NoNodeRunsKind`` at once when no alive node runs it.
    public func makeSystems(for kind: String, schema: TaskSchema? = nil) async throws -> (Systems, Task<Void, Never>, KindPlacement) {
        let events = membershipEvents()
        let alive = members.filter { $0.state == .alive }
        var offers = [KindPlacement.Offer(node: system.node.name, schemas: registry.schemas)]
        await withTaskGroup(of: KindPlacement.Offer.self) { group in
            for member in alive {
                group.addTask { KindPlacement.Offer(node: member.node.name, schemas: await self.kinds(of: member)) }
            }
            for await offer in group { offers.append(offer) }
        }
        let placement = try KindPlacement(kind: kind, submitter: schema ?? registry.schema(of: kind), offers: offers)
        let wanted = placement.schema
        let local = system.node.name
        let initial = alive.filter { placement.nodes.contains($0.node.name) }
        let (systems, following) = try systems(localOffered: placement.nodes.contains(local), events: events, initial: initial) { [weak self] member in
            guard let self else { return false }
            if placement.nodes.contains(member.node.name) { return true }
            return await self.kinds(of: member)?.contains(wanted) == true
        }
        return (systems, following, placement)
    }

    /// What `member`'s worker runs, asked once per incarnation (within the call timeout);
    /// nil when it could not be asked.
    public func kinds(of member: Member) async -> [TaskSchema]? {
        if let known = memberKinds.withLock({ $0[member.node] }) { return known }
        guard let remote = try? ScanSystem.resolve(id: ActorID(node: member.node, name: ScanSystem.wellKnownName), using: system),
              let schemas = try? await withTimeout(seconds: 2, clock: system.runtime.clock, operation: { try await remote.kinds() })
        else { return nil }
        memberKinds.withLock { $0[member.node] = schemas }
        return schemas
    }

    /// Systems offering this node's worker (when `localOffered`), the `initial` members
    /// from the start, and every member that turns alive later and `accepts`, kept current
    /// from `events` (subscribed to before `initial` was read, so no change is missed).
    private func systems(
        localOffered: Bool, events: AsyncStream<MembershipEvent>, initial: [Member], accepts: @escaping @Sendable (Member) async -> Bool
    ) throws -> (Systems, Task<Void, Never>) {
        guard let worker else { throw RemoteCallError.actorNotFound("worker: the node is not started") }
        let system = system
        func remote(_ member: Member) -> ScanSystem? {
            try? ScanSystem.resolve(id: ActorID(node: member.node, name: ScanSystem.wellKnownName), using: system)
        }
        // The initial members are there before the first task asks (with thousands of
        // waiting slots the local worker alone would take a whole job before an addition).
        let others = initial.compactMap { member in
            remote(member).map { (node: member.node.name, system: $0, slots: member.slots, waitingSlots: member.waitingSlots) }
        }
        let systems = Systems(
            local: worker, node: system.node.name, slots: settings.slots, waitingSlots: settings.waitingSlots, others: others,
            localOffered: localOffered, clock: system.runtime.clock)
        madeSystems.withLock { made in
            made.removeAll { $0.systems == nil }
            made.append(WeakSystems(systems: systems))
        }
        func add(_ member: Member) async {
            if let remote = remote(member), await accepts(member) {
                await systems.addSystem(node: member.node.name, system: remote, slots: member.slots, waitingSlots: member.waitingSlots)
            }
        }
        let following = Task {
            for await event in events {
                switch event {
                case .joined(let member) where member.state == .alive, .changed(let member, _) where member.state == .alive:
                    await add(member)
                case .changed(let member, _) where member.state == .dead || member.state == .left:
                    await systems.removeSystem(node: member.node.name)
                case .removed(let member):
                    await systems.removeSystem(node: member.node.name)
                default:
                    break
                }
            }
        }
        return (systems, following)
    }

    /// Members other than this node, by name.
    public var members: [Member] {
        membership.withLock { $0.sortedMembers }
    }

    /// ``members`` in the membership's own order, not sorted: for readers that need no
    /// order and read often (a node's job groups, every quarter second).
    public var membersInAnyOrder: [Member] {
        membership.withLock { Array($0.members.values) }
    }

    /// When the membership last ticked (its latest check of the members' timeouts, on
    /// this node's clock), the members now (in no particular order) and the gap between
    /// two ticks past which it takes its own timers to have run late
    /// (``Membership/lateTickAfter``), read at one instant; nil before its first tick, or
    /// when its last one is not later than `seen`. What the simulator's check of failure
    /// detection reads after every event, to judge each tick once, on the membership's own
    /// notion of on time.
    public func membersAtTick(after seen: Double? = nil) -> (tick: Double, members: [Member], lateTickAfter: Double)? {
        membership.withLock { membership in
            guard let tick = membership.lastTick, seen.map({ tick > $0 }) ?? true else { return nil }
            return (tick, Array(membership.members.values), membership.lateTickAfter)
        }
    }

    /// Hands `body` each of ``members`` without copying or sorting them
    /// (``Membership/forEachMember(_:)``): for what runs often and needs no order (the
    /// prober's peers at every tick, the simulator's invariants after every event). It runs
    /// under the membership's lock, so it must not call this node.
    public func forEachMember(_ body: (Member) throws -> Void) rethrows {
        try membership.withLock { try $0.forEachMember(body) }
    }

    /// The highest wire protocol version this node and every alive (or suspect) member
    /// speak: the version whose behaviour the whole cluster may use. While a rolling
    /// upgrade runs, the members not yet upgraded hold it at the older version; the last
    /// one upgraded (or gone) raises it. Where members share no version (they could not
    /// all be connected) it is this node's lowest. See Docs/upgrades.md.
    public var protocolVersion: Int {
        let speakers = members.filter { $0.state == .alive || $0.state == .suspect }.map(\.protocolVersions)
        return ProtocolVersions.common([settings.protocolVersions] + speakers) ?? settings.protocolVersions.lowest
    }

    /// The one place code asks whether it may use behaviour that protocol `version`
    /// introduced and that every member must understand (a new message, a new field a
    /// replica must apply): true once every alive member speaks it. Behaviour between
    /// two peers alone asks their connection instead (``ClusterSystem/protocolVersion(with:)``).
    public func mayUse(protocolVersion version: Int) -> Bool {
        protocolVersion >= version
    }

    /// The members that hold ``protocolVersion`` below this node's highest: alive or
    /// suspect members that do not speak it yet, by name (empty once the cluster is whole).
    public var membersBehind: [String] {
        let highest = settings.protocolVersions.highest
        return members.filter { ($0.state == .alive || $0.state == .suspect) && $0.protocolVersions.highest < highest }.map(\.node.name)
    }

    /// Valid beacons of other clusters ignored so far (hostile ones are counted in
    /// `system.rejections`).
    public var ignoredBeacons: Int { discovery?.ignoredBeacons ?? 0 }

    /// Membership changes from now on.
    public func membershipEvents() -> AsyncStream<MembershipEvent> {
        let (stream, continuation) = AsyncStream<MembershipEvent>.makeStream()
        let key = nextSubscriber.add(1, ordering: .relaxed).oldValue
        subscribers.withLock { $0[key] = continuation }
        continuation.onTermination = { [weak self] _ in self?.subscribers.withLock { $0[key] = nil } }
        return stream
    }

    private func observe(_ observation: Membership.Observation, at time: Double? = nil) {
        let time = time ?? system.runtime.now
        guard !stopped.load(ordering: .acquiring) else { return }
        let actions = membership.withLock { $0.observe(observation, at: time) }
        membershipChanges.bump()
        for action in actions {
            switch action {
            case .dial(let address):
                // Already connected (a dial race settled on a connection whose `connected`
                // the membership missed: seen once as a member stuck `joining` for good):
                // say so instead of dialling again, since a new dial would lose the race.
                if let peer = system.establishedPeer(at: address) {
                    observe(.connected(node: peer.node, address: peer.address, slots: peer.slots, waitingSlots: peer.waitingSlots,
                                       protocolVersions: peer.protocolVersions))
                    continue
                }
                guard let address = try? SocketAddress(parsing: address) else { continue }
                let system = system
                Task { [weak self] in
                    do {
                        try await system.join(address)
                    } catch {
                        self?.logDialFailure(address, error)
                    }
                }
            case .disconnect(let node):
                system.disconnect(node, reason: "silent for more than \(settings.deadTimeout) s")
            case .publish(let event):
                let streams = subscribers.withLock { $0.sorted { $0.key < $1.key }.map(\.value) }
                for stream in streams { stream.yield(event) }
            case .timersRanLate(let seconds):
                system.log("this node's timers ran \(String(printf: "%.1f", seconds)) s late (was it paused?): peers get fresh heartbeats before anyone is declared dead")
            }
        }
    }

    /// One line on how late the heartbeat ticks came while the node ran (nothing if it
    /// never ticked twice): what `Scripts/bench-protocol` reads.
    private func logTimerLateness() {
        let lateness = timerLateness.snapshot
        guard lateness.count > 0 else { return }
        func later(than bound: Double) -> Int {
            lateness.count - (lateness.buckets.first { $0.bound == bound }?.count ?? 0)
        }
        let worst = lateness.buckets.first { $0.count == lateness.count }.map { String(printf: "at most %g s", $0.bound) } ?? "over 5 s at worst"
        system.log("heartbeat timer: \(lateness.count) ticks, \(later(than: 0.05)) more than 50 ms late, \(later(than: 0.5)) more than 0.5 s late, \(worst), mean \(String(printf: "%.4f", lateness.sum / Double(lateness.count))) s late")
    }

    /// Probes the members that have been silent (see ``Prober``).
    private func probeSilentMembers() {
        guard probes != nil else { return }
        // In the membership's order, unsorted: the prober keys its peers by name.
        var peers: [Prober.Peer] = []
        membership.withLock { membership in
            // Room for every member at once: grown as appended, the list was copied four
            // or five times a tick.
            peers.reserveCapacity(membership.members.count)
            membership.forEachMember { member in
                if member.state == .alive || member.state == .suspect {
                    peers.append(Prober.Peer(node: member.node, address: member.address, lastHeard: member.lastHeard))
                }
            }
        }
        carryOut(prober.withLock { $0.tick(peers: peers, at: system.runtime.now) })
    }

    /// Sends the prober's datagrams; a member that answered a probe is news from it.
    private func carryOut(_ actions: [Prober.Action]) {
        for action in actions {
            switch action {
            case .send(let message, let address):
                probes?.send(message, to: address)
            case .answered(let node):
                observe(.heard(node: node))
            }
        }
    }

    /// Gives up this node's name: stops beacons and timers (so it neither announces nor
    /// dials any more), logs why, and completes ``nameConflict``.
    private func yieldName(_ conflict: NameConflict) {
        guard nameConflictPromise.resolve(conflict) else { return }
        stopTimersAndDiscovery()
        system.log("\(conflict)")
    }

    /// Logs why dialling `address` failed, once per address and reason (redials repeat).
    private func logDialFailure(_ address: SocketAddress, _ error: any Error) {
        let seed = settings.peers.contains(address.description)
        let line = "cannot join \(address): \(error)" + (seed ? "; trying again, backing off to once every \(Int(membership.withLock { $0.maximumRedialInterval })) s" : "")
        let isNew = loggedDialFailures.withLock { $0.insert(line).inserted }
        if isNew { system.log(line) }
    }

    /// This node's counts, the attempts its worker ended after sequence `after` (and those
    /// running), the jobs it coordinates, its heartbeat round trips, and `replicaGroups`
    /// (what ``replicaGroups()`` said; it is asynchronous, so the caller asks it first).
    public func observation(tasksAfter after: UInt64, replicaGroups: [ReplicaGroupView]? = nil) -> NodeObservation {
        let (spans, last) = timeline.spans(after: after)
        let now = system.runtime.now
        return NodeObservation(
            node: system.node.name, now: now, uptime: now - started, slots: settings.slots, waitingSlots: settings.waitingSlots,
            inUse: counters.inUse, succeeded: counters.succeeded, failed: counters.failed,
            tasks: spans, lastTaskSequence: last, jobs: jobBoard.records, roundTrips: system.heartbeatRoundTrips,
            kinds: registry.schemas, replicaGroups: replicaGroups)
    }

    private func statusReport() -> [MemberStatus] {
        let inUse = counters.inUse
        let me = MemberStatus(
            name: system.node.name, address: system.advertisedAddress.description, state: Member.State.alive.rawValue,
            incarnation: String(system.node.incarnation, radix: 16), slots: settings.slots, waitingSlots: settings.waitingSlots,
            slotsInUse: inUse.cpu, waitingSlotsInUse: inUse.waiting,
            running: inUse.total, completed: counters.completed, uptime: system.runtime.now - started, dashboard: dashboard,
            kinds: registry.schemas, protocolVersions: settings.protocolVersions)
        return [me] + members.map { member in
            MemberStatus(
                name: member.node.name, address: member.address, state: member.state.rawValue,
                incarnation: String(member.node.incarnation, radix: 16), slots: member.slots, waitingSlots: member.waitingSlots,
                slotsInUse: nil, waitingSlotsInUse: nil, running: nil, completed: nil, uptime: nil, dashboard: nil,
                kinds: memberKinds.withLock { $0[member.node] }, protocolVersions: member.protocolVersions)
        }
    }
}

/// A ``Systems`` its node does not keep alive (``ClusterNode/coordinatorSystems``).
private struct WeakSystems: Sendable {
    weak var systems: Systems?
}
