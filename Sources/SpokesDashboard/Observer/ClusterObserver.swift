import SpokesBikes
import SpokesCluster
import SpokesJobs
import SpokesConcurrency

/// Gathers what the dashboard shows from every member of the cluster: each node's
/// ``NodeObservation`` (through its well-known ``NodeStatus``; with the replicated groups
/// it holds, which say where each job's leader and replicas are), and for bike jobs the
/// stations' bikes from the coordinator's ``JobService``. A change of a group's leader
/// between two gatherings goes on the timeline as a failover (so failovers are seen
/// while someone watches the dashboard).
///
/// One gathering serves every viewer: ``snapshot(maxAge:)`` returns the last snapshot
/// while it is younger than `maxAge`, and concurrent callers share one poll. Each call to
/// another node is bounded by `callTimeout`, so a frozen member slows a snapshot by at
/// most that much and shows up without counts.
public actor ClusterObserver {
    public let node: ClusterNode
    public let callTimeout: Double
    private var timeline = ClusterTimeline()
    /// The last observation of each node, kept while a poll of it fails.
    private var observations: [String: NodeObservation] = [:]
    private var answered: Set<String> = []
    /// Station bikes of ended jobs never change: asked once (kept while a board lists the job).
    private var finalBikes: [String: [Int]] = [:]
    private var places: [String: StationsView] = [:]
    private var latest: (snapshot: DashboardSnapshot, at: Double)?
    private var gathering: Task<DashboardSnapshot, Never>?

    public init(node: ClusterNode, callTimeout: Double = 1) {
        self.node = node
        self.callTimeout = callTimeout
    }

    /// The cluster now, gathered at most `maxAge` seconds ago.
    public func snapshot(maxAge: Double = 0.25) async -> DashboardSnapshot {
        if let latest, node.system.runtime.now - latest.at <= maxAge { return latest.snapshot }
        if let gathering { return await gathering.value }
        let task = Task { await self.gather() }
        gathering = task
        let snapshot = await task.value
        gathering = nil
        latest = (snapshot, node.system.runtime.now)
        return snapshot
    }

    /// Where a bike job's stations are, from its coordinator; nil when no member knows the job.
    public func stations(of job: String) async -> StationsView? {
        if let known = places[job] { return known }
        for service in await jobServices(for: job) {
            let timeout = callTimeout
            guard let network = try? await withTimeout(seconds: timeout, clock: node.system.runtime.clock, operation: { try await service.networkAtStart(of: job) }) else {
                continue
            }
            let view = StationsView(
                job: job, network: network.name,
                stations: network.stations.map {
                    StationsView.Place(id: $0.id, name: $0.name, latitude: $0.latitude, longitude: $0.longitude,
                                       capacity: $0.freeBikes + $0.emptySlots, bikesAtStart: $0.freeBikes)
                })
            places[job] = view
            return view
        }
        return nil
    }

    /// A finished bike job's report, from its coordinator (or any member that stored it).
    public func report(of job: String) async -> SimulationReport? {
        for service in await jobServices(for: job) {
            if let report = try? await withTimeout(seconds: max(callTimeout, 5), clock: node.system.runtime.clock, operation: { try await service.report(of: job) }) {
                return report
            }
        }
        return nil
    }

    // MARK: - Gathering

    private func gather() async -> DashboardSnapshot {
        let system = node.system
        let members = node.members
        let asked = members.filter { $0.state == .alive || $0.state == .suspect }
        let timeout = callTimeout
        var polls: [(name: String, after: UInt64, sentAt: Double, answer: NodeObservation?, receivedAt: Double)] = []
        let selfAfter = timeline.lastSequence(of: system.node.name)
        let node = node
        let selfGroups = try? await withTimeout(seconds: timeout, clock: node.system.runtime.clock) { await node.replicaGroups() }
        let selfSent = node.system.runtime.now
        polls.append((system.node.name, selfAfter, selfSent, node.observation(tasksAfter: selfAfter, replicaGroups: selfGroups), node.system.runtime.now))
        await withTaskGroup(of: (String, UInt64, Double, NodeObservation?, Double).self) { group in
            for member in asked {
                let after = timeline.lastSequence(of: member.node.name)
                let id = ActorID(node: member.node, name: NodeStatus.wellKnownName)
                group.addTask {
                    let sent = node.system.runtime.now
                    let answer = try? await withTimeout(seconds: timeout, clock: node.system.runtime.clock) {
                        try await NodeStatus.resolve(id: id, using: system).observe(tasksAfter: after)
                    }
                    return (member.node.name, after, sent, answer, node.system.runtime.now)
                }
            }
            for await poll in group { polls.append(poll) }
        }
        answered = []
        var groupViews: [String: [ReplicaGroupView]] = [:]
        for poll in polls {
            guard let answer = poll.answer else { continue }
            timeline.absorb(answer, askedAfter: poll.after, sentAt: poll.sentAt, receivedAt: poll.receivedAt)
            observations[poll.name] = answer
            answered.insert(poll.name)
            for view in answer.replicaGroups ?? [] { groupViews[view.id, default: []].append(view) }
        }
        let known = Set([system.node.name] + members.filter { $0.state != .left && $0.state != .dead }.map(\.node.name))
        for name in observations.keys where !known.contains(name) {
            observations[name] = nil
            timeline.forget(name)
        }
        // Station places and final counts are kept only for jobs some board still lists.
        let listed = Set(observations.values.flatMap { $0.jobs.map(\.id) })
        places = places.filter { listed.contains($0.key) }
        finalBikes = finalBikes.filter { listed.contains($0.key) }

        let now = node.system.runtime.now
        // Only this poll's answers: a member that did not answer may have lost its lead.
        let groups = groupViews.keys.sorted().compactMap { ReplicaGroupView.mostInformed(groupViews[$0]!) }
        timeline.observeGroups(groups, at: now)
        let trips = system.heartbeatRoundTrips
        let me = observations[system.node.name]
        var views = [MemberView(
            name: system.node.name, address: system.address.description, state: Member.State.alive.rawValue, isServing: true,
            slots: node.settings.slots, waitingSlots: node.settings.waitingSlots, inUse: me?.inUse, completed: me?.succeeded, failed: me?.failed,
            uptime: me?.uptime, kinds: me?.kinds)]
        for member in members {
            let observed = answered.contains(member.node.name) ? observations[member.node.name] : nil
            views.append(MemberView(
                name: member.node.name, address: member.address, state: member.state.rawValue, isServing: false,
                slots: member.slots, waitingSlots: member.waitingSlots, inUse: observed?.inUse, completed: observed?.succeeded, failed: observed?.failed,
                roundTripMilliseconds: trips[member.node.name].map { $0 * 1000 }, uptime: observed?.uptime, kinds: observed?.kinds))
        }
        // Each running job's fair share of the alive members' slots, as `spokes jobs` shows it.
        var jobs = await jobViews()
        let budgets = views.filter { $0.state == Member.State.alive.rawValue }.reduce(TaskBudgets.zero) {
            TaskBudgets(cpu: $0.cpu + $1.slots, waiting: $0.waiting + $1.waitingSlots)
        }
        let shares = JobSlots.shares(of: Dictionary(jobs.compactMap { job in job.slots.map { (job.id, $0) } }) { first, _ in first }, budgets: budgets)
        for index in jobs.indices where jobs[index].slots != nil {
            let share = shares[jobs[index].id]
            jobs[index].slots?.fairShare = share
        }
        return DashboardSnapshot(
            node: system.node.name, cluster: node.settings.cluster, time: now, members: views,
            jobs: jobs, tasks: timeline.spans(now: now), groups: groups, failovers: timeline.failovers(now: now))
    }

    /// Every coordinator's jobs, running first; bike jobs with their stations' bikes.
    private func jobViews() async -> [JobView] {
        var running: [(start: Double, view: JobView)] = []
        var ended: [(end: Double, view: JobView)] = []
        let shown = Self.oneRecordPerJob(observations.mapValues(\.jobs))
        for (name, observation) in observations {
            let offset = timeline.offset(of: name) ?? 0
            for record in shown[name] ?? [] {
                let bikes = record.kind == BikeUserTask.name ? await stationBikes(of: record) : nil
                let view = JobView(record, coordinatorNow: observation.now, stationBikes: bikes)
                if record.state == .running {
                    running.append((record.startedAt + offset, view))
                } else {
                    ended.append(((record.endedAt ?? record.startedAt) + offset, view))
                }
            }
        }
        return running.sorted { $0.start > $1.start }.map(\.view) + ended.sorted { $0.end > $1.end }.map(\.view)
    }

    /// The boards' records with each job once: where two boards list it (a coordinator that
    /// lost it to a take-over, an older release's board), a running record wins, then the
    /// board of the lowest node name. Keyed by the board's node, each board's order kept.
    static func oneRecordPerJob(_ boards: [String: [JobBoard.Record]]) -> [String: [JobBoard.Record]] {
        let running = Set(boards.values.flatMap { $0.filter { $0.state == .running }.map(\.id) })
        var shown = Set<String>()
        var kept: [String: [JobBoard.Record]] = [:]
        for (node, records) in boards.sorted(by: { $0.key < $1.key }) {
            kept[node] = records.filter { record in
                (record.state == .running || !running.contains(record.id)) && shown.insert(record.id).inserted
            }
        }
        return kept
    }

    private func stationBikes(of record: JobBoard.Record) async -> [Int]? {
        if let known = finalBikes[record.id] { return known }
        guard let service = await jobServices(for: record.id).first else { return nil }
        let bikes = try? await withTimeout(seconds: callTimeout, clock: node.system.runtime.clock) { try await service.stationBikes(of: record.id) }
        if record.state != .running, let bikes { finalBikes[record.id] = bikes }
        return bikes
    }

    /// The bike job desks to ask about `job`: its coordinator's when known, else every member's.
    private func jobServices(for job: String) async -> [BikeJobService] {
        let system = node.system
        let coordinator = observations.values.first { $0.jobs.contains { $0.id == job } }?.node
        var ids = [system.node] + node.members.filter { $0.state == .alive }.map(\.node)
        if let coordinator { ids = ids.filter { $0.name == coordinator } }
        return ids.compactMap { try? BikeJobService.resolve(id: ActorID(node: $0, name: BikeJobService.wellKnownName), using: system) }
    }
}
