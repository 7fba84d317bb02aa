import SpokesBikes
import SpokesCluster
import SpokesConcurrency
import SpokesJobs
import SpokesNode
import SpokesReplication
import Synchronization

/// The safety invariants of a seed of ``NodesModel`` checked after every event: each
/// time the driver moves virtual time (to the next timer, a delayed message's arrival or
/// a fault), once every node is quiet again, so after every timer that fired and every
/// message it caused; and on the way to the end's checks. Read from the real nodes (their
/// members, workers, coordinators' placements and replicas), never from a copy of them.
/// What the hand-written shells of the membership, scheduling and bike models checked:
/// - **membership** (each observer's members): a member an observer suspected (or took
///   for dead) is shown alive only after something arrived from it after the suspicion
///   (its `lastHeard` moved); no observer lists an incarnation that never started, nor
///   goes back from a name's incarnation to an older one (a name belongs to one, the
///   newest); and no observer replaces a member that runs and was heard from within the
///   suspect timeout by another incarnation of its name (``NodesModel/Options/twinAt``);
///   and a member nothing arrived from, as the network handed it to the observer, for
///   longer than the suspect timeout is not shown alive by an observer whose own ticks
///   ran on time that long (``NodesFailureDetection``);
/// - **scheduling**: a worker never runs more attempts than its slots, nor queues more of
///   a job than its queue places, nor more in all than its queues hold, and no attempt
///   waits while a slot is free (``ScanSystem/admissionNow``); a coordinator never has
///   more attempts out on one worker than its slots plus queue places
///   (``ClusterNode/coordinatorSystems``);
/// - **replicas** (every job group's replica on a live node): replicas that applied the
///   same index hold the same state (none holds a state the committed log does not give);
///   a task's or user's counted result, once any replica holds it, is the one every
///   replica holds ever after (a result counts once, across every coordinator); a bike
///   job's book conserves its bikes, keeps every station between empty and full, and its
///   machine never refused a committed batch's event (a coordinator made every batch from
///   the committed book: a take-over from another state is caught here).
final class NodesSafety: Sendable {
    /// What an observer incarnation last saw under one name (an observer lists one
    /// incarnation a name: its members are keyed by name).
    private struct Seen {
        /// The newest incarnation listed under the name (one that started: checked when
        /// it is first listed, and an incarnation that started stays started).
        var incarnation: UInt64
        /// Its `lastHeard` at the last check.
        var lastHeard: Double
        /// Its `lastHeard` when the observer was first seen suspecting it (or taking it
        /// for dead), until the observer shows it alive again.
        var suspectedSince: Double?
    }

    /// One observer incarnation's ``Seen``s, sorted by name and found by binary search:
    /// the check runs after every event for every member of every observer, and keys of
    /// two incarnations hashed four or five times a member were most of its cost; a few
    /// comparisons of short names are not.
    ///
    /// Each walk over the observer's members first tries, at its k-th member, the place
    /// it found the k-th member at in the walk before (``hints``): a membership lists its
    /// members in the same order from one walk to the next until one comes or goes, so
    /// one equality of two short names mostly stands for the search. A stale hint (a
    /// name inserted since) fails the equality and the search runs: the place found is
    /// the same either way, names being unique.
    private struct Observed {
        var observer: NodeID
        /// The observer's ``ClusterNode/membershipChanges`` when its members were last
        /// walked (and passed): while it stays, a walk would find every member as it was
        /// left and pass again (the walk's only news is a member's change), so it is
        /// skipped. Most events change one node's membership, not every node's.
        var walkedAt: UInt64?
        private var names: [String] = []
        private var seen: [Seen] = []
        /// Where the last walk found its k-th member, by k.
        private var hints: [Int] = []

        init(observer: NodeID) {
            self.observer = observer
        }

        /// Where `name`, the walk's `step`-th member, is, or where it would go; kept as
        /// the next walk's hint for its `step`-th member.
        mutating func position(of name: String, step: Int) -> (index: Int, found: Bool) {
            if step < hints.count {
                let hint = hints[step]
                if hint < names.count, names[hint] == name { return (hint, true) }
            }
            let found = search(name)
            if step < hints.count { hints[step] = found.index } else { hints.append(found.index) }
            return found
        }

        /// Where `name` is, or where it would go, by binary search.
        private func search(_ name: String) -> (index: Int, found: Bool) {
            var low = 0, high = names.count
            while low < high {
                let middle = (low + high) / 2
                if names[middle] < name { low = middle + 1 } else { high = middle }
            }
            return (low, low < names.count && names[low] == name)
        }

        subscript(position: (index: Int, found: Bool)) -> Seen? { position.found ? seen[position.index] : nil }

        mutating func set(_ value: Seen, of name: String, at position: (index: Int, found: Bool)) {
            if position.found {
                seen[position.index] = value
            } else {
                names.insert(name, at: position.index)
                seen.insert(value, at: position.index)
            }
        }
    }

    /// A replica: its node's incarnation and its group.
    private struct Replica: Hashable {
        var node: NodeID
        var group: String
    }

    /// What a node incarnation's checks found, as the ``ChangeCount``s of what they read
    /// when they passed: a check of state whose count has not moved since would pass
    /// again (each is a function of that state alone), and is skipped, with the hop onto
    /// the actor that holds it (and, for a replica, the copy of its status and machine):
    /// most events change no worker, coordinator or replica of most nodes.
    private struct Unchanged {
        var node: NodeID
        /// Its worker's admission (``TaskCounters/admissionChanges``).
        var admission: UInt64?
        /// Its coordinators' placements (``Systems/placementChanges``), those listed at
        /// the last check.
        var placements: [CheckedPlacement] = []
        /// Its replicas, every one (``RaftHost/appliedChanges``).
        var replicas: UInt64?
    }

    /// A coordinator's placement as last checked. Held weakly (the checks keep no
    /// coordinator alive) and found by identity: another ``Systems`` made at the address
    /// of one that ended is not taken for it, since this one is gone.
    private struct CheckedPlacement {
        weak var systems: Systems?
        var changes: UInt64
    }

    private struct State {
        /// What each node's observer listed last (by the node's index; of the incarnation
        /// running there), and what incarnations that no longer run there listed.
        var observed: [Observed?] = []
        var retired: [NodeID: Observed] = [:]

        /// What `observer`, the node at `index` now, listed before (nothing when it is
        /// new), taken out of ``observed`` until the caller puts it back; an incarnation
        /// it replaced there is kept in ``retired``.
        mutating func take(_ observer: NodeID, at index: Int) -> Observed {
            while observed.count <= index { observed.append(nil) }
            // Moved out, not copied: the caller changes it in place and puts it back.
            let kept = observed[index]
            observed[index] = nil
            if let kept, kept.observer == observer { return kept }
            if let kept { retired[kept.observer] = kept }
            return retired.removeValue(forKey: observer) ?? Observed(observer: observer)
        }
        /// (group, applied index): the first replica seen there, and its state's fingerprint.
        var fingerprints: [String: (node: Int, fingerprint: Int)] = [:]
        /// (replica's node incarnation, group): the applied index last checked.
        var lastApplied: [Replica: Int] = [:]
        /// (group, task or user): the counted result first seen, and on which node.
        var counted: [String: (node: Int, result: String)] = [:]
        /// A bike job's network as it started, by its group (read once from the spec).
        var bikeNetworks: [String: Network] = [:]
        /// What the checks last saw unchanged of the incarnation at each node's index.
        var unchanged: [Unchanged?] = []

        /// Whether `observer`, the node at `index`, was last walked at `changes` (its
        /// members unchanged since): read in place, without taking its record out.
        func walked(_ observer: NodeID, at index: Int, changes: UInt64) -> Bool {
            index < observed.count && observed[index]?.observer == observer && observed[index]?.walkedAt == changes
        }

        /// Whether what ``checkScheduling(_:_:)`` reads of `node`, the incarnation at
        /// `index`, changed since its last check: its worker's `admission` count (nil
        /// when it has no worker), or its `coordinators` and their placements (read in
        /// place).
        func schedulingChanged(_ node: NodeID, at index: Int, admission: UInt64?, coordinators: [Systems]) -> Bool {
            guard let seen = lastSeen(node, at: index) else { return admission != nil || !coordinators.isEmpty }
            if let admission, seen.admission != admission { return true }
            return coordinators.count != seen.placements.count
                || zip(coordinators, seen.placements).contains { systems, checked in
                    checked.systems !== systems || checked.changes != systems.placementChanges.value
                }
        }

        /// Whether `node`'s replicas (the incarnation at `index`) applied anything since
        /// their last check (`applied`: its host's count).
        func replicasChanged(_ node: NodeID, at index: Int, applied: UInt64) -> Bool {
            guard index < unchanged.count, unchanged[index]?.node == node else { return true }
            return unchanged[index]?.replicas != applied
        }

        /// What was last seen of `node`, the incarnation at `index` now (nil when it is
        /// new there).
        private func lastSeen(_ node: NodeID, at index: Int) -> Unchanged? {
            guard index < unchanged.count, let seen = unchanged[index], seen.node == node else { return nil }
            return seen
        }

        /// ``lastSeen(_:at:)``, or nothing seen yet.
        func unchanged(_ node: NodeID, at index: Int) -> Unchanged {
            lastSeen(node, at: index) ?? Unchanged(node: node)
        }

        mutating func set(_ seen: Unchanged, at index: Int) {
            while unchanged.count <= index { unchanged.append(nil) }
            unchanged[index] = seen
        }
    }

    private let state = Mutex(State())
    /// Checks made, and the wall-clock seconds they took (what checking after every event costs).
    private let cost = Mutex((checks: 0, seconds: 0.0))
    var checks: Int { cost.withLock { $0.checks } }
    var seconds: Double { cost.withLock { $0.seconds } }

    /// The first invariant broken now, or nil.
    func check(_ run: NodesRun) async -> String? {
        let wallClock = RealClock(), started = wallClock.now
        defer { cost.withLock { $0 = ($0.checks + 1, $0.seconds + wallClock.now - started) } }
        let live = run.liveAssemblies
        let observers = live.map { (index: $0.index, node: $0.assembly.node) }
        if let broken = checkMembership(observers.map { ($0.index, $0.node) }, started: { run.startedIncarnations }, running: { run.runningIncarnations }) {
            return broken
        }
        if let broken = run.failureDetection.check(observers) { return broken }
        for (index, assembly) in live {
            // Most events change no worker, coordinator or replica of most nodes: what did
            // not change is passed over here, without the cost of an async call.
            let (scheduling, replicas) = changedSinceChecked(index, assembly)
            if scheduling, let broken = await checkScheduling(index, assembly.node) { return broken }
            if replicas, let broken = await checkReplicas(index, assembly) { return broken }
        }
        return nil
    }

    /// Whether the node at `index` changed, since its last check, what
    /// ``checkScheduling(_:_:)`` reads (its worker's admission, a coordinator's placement,
    /// or which coordinators it runs) and what ``checkReplicas(_:_:)`` reads (an applied
    /// index): a check of what did not change would pass again (``Unchanged``).
    private func changedSinceChecked(_ index: Int, _ assembly: NodeAssembly) -> (scheduling: Bool, replicas: Bool) {
        let node = assembly.node
        let incarnation = node.system.node
        let admission = node.worker == nil ? nil : node.counters.admissionChanges.value
        let coordinators = node.coordinatorSystems
        let applied = assembly.raft.appliedChanges.value
        return state.withLock { state in
            (state.schedulingChanged(incarnation, at: index, admission: admission, coordinators: coordinators),
             state.replicasChanged(incarnation, at: index, applied: applied))
        }
    }

    // MARK: Membership

    /// `started` and `running` are computed only when needed (a name listed with an
    /// incarnation for the first time, a name that moves to a newer incarnation): built
    /// after every event, they cost more than the checks.
    private func checkMembership(_ observers: [(index: Int, node: ClusterNode)], started: () -> Set<NodeID>, running: () -> Set<NodeID>) -> String? {
        var startedNow: Set<NodeID>?
        var runningNow: Set<NodeID>?
        return state.withLock { state in
            for (index, observer) in observers {
                let me = observer.system.node
                let changes = observer.membershipChanges.value
                if state.walked(me, at: index, changes: changes) { continue }
                var observed = state.take(me, at: index)
                defer { state.observed[index] = observed }
                let now = observer.system.runtime.clock.now
                let suspectTimeout = observer.settings.suspectTimeout
                // In place, under the observer's membership lock (``Broken`` ends it early).
                do {
                    var step = 0
                    try observer.forEachMember { member in
                        let id = member.node
                        let position = observed.position(of: id.name, step: step)
                        step += 1
                        let known = observed[position]
                        if known?.incarnation != id.incarnation {
                            if startedNow == nil { startedNow = started() }
                            if !startedNow!.contains(id) { throw Broken(message: "n\(index) lists \(id), an incarnation that never started") }
                        }
                        var seen = Seen(incarnation: id.incarnation, lastHeard: member.lastHeard)
                        if let known {
                            if id.incarnation < known.incarnation {
                                throw Broken(message: "n\(index) went back from \(id.name)'s incarnation \(String(known.incarnation, radix: 16)) to an older one, \(id)")
                            }
                            if id.incarnation > known.incarnation, now - known.lastHeard < suspectTimeout {
                                let old = NodeID(name: id.name, incarnation: known.incarnation)
                                if runningNow == nil { runningNow = running() }
                                if runningNow!.contains(old) {
                                    throw Broken(message: "n\(index) replaced \(old), which runs and was heard from \(String(format: "%.2f", now - known.lastHeard)) s ago (within the suspect timeout), by \(id)")
                                }
                            }
                            // A newer incarnation starts with nothing suspected of it.
                            if id.incarnation == known.incarnation { seen.suspectedSince = known.suspectedSince }
                        }
                        var broken: String?
                        switch member.state {
                        case .suspect, .dead:
                            if seen.suspectedSince == nil { seen.suspectedSince = member.lastHeard }
                        case .alive:
                            if let since = seen.suspectedSince {
                                seen.suspectedSince = nil
                                if member.lastHeard <= since {
                                    broken = "n\(index) shows \(id) alive again with nothing heard from it since it suspected it (last heard at \(fixed(since, 3)))"
                                }
                            }
                        default:
                            break
                        }
                        observed.set(seen, of: id.name, at: position)
                        if let broken { throw Broken(message: broken) }
                    }
                    observed.walkedAt = changes
                } catch let broken as Broken {
                    return broken.message
                } catch {
                    return "\(error)"
                }
            }
            return nil
        }
    }

    /// A broken invariant, ending a walk over an observer's members.
    private struct Broken: Error {
        var message: String
    }

    // MARK: Scheduling

    /// Reads a worker's admission, or a coordinator's loads, only when it changed since it
    /// was last checked (``Unchanged``).
    private func checkScheduling(_ index: Int, _ node: ClusterNode) async -> String? {
        var seen = state.withLock { $0.unchanged(node.system.node, at: index) }
        defer { state.withLock { $0.set(seen, at: index) } }
        let admissionChanges = node.counters.admissionChanges.value
        if seen.admission != admissionChanges, let worker = node.worker, let admission = await worker.whenLocal({ $0.admissionNow }) {
            for cost in TaskCost.allCases {
                if admission.inUse[cost] > admission.budgets[cost] {
                    return "n\(index)'s worker runs \(admission.inUse[cost]) \(cost) attempts, on \(admission.budgets[cost]) slots"
                }
                for (job, state) in admission.jobs(cost) where state.queue.count > admission.queueLength(cost) {
                    return "n\(index)'s worker queues \(state.queue.count) \(cost) attempts of \(job), in \(admission.queueLength(cost)) queue places of a job"
                }
                if admission.queued(cost) > admission.queueLength(cost) * WorkerAdmission.queuedJobsLimit {
                    return "n\(index)'s worker queues \(admission.queued(cost)) \(cost) attempts, in \(admission.queueLength(cost) * WorkerAdmission.queuedJobsLimit) queue places in all"
                }
                if admission.queued(cost) > 0, admission.inUse[cost] < admission.budgets[cost] {
                    return "n\(index)'s worker keeps \(admission.queued(cost)) \(cost) attempts waiting with \(admission.budgets[cost] - admission.inUse[cost]) slots free"
                }
            }
            seen.admission = admissionChanges
        }
        let before = seen.placements
        seen.placements = []
        for systems in node.coordinatorSystems {
            let changes = systems.placementChanges.value
            if let checked = before.first(where: { $0.systems === systems }), checked.changes == changes {
                seen.placements.append(checked)
                continue
            }
            for load in await systems.loads {
                for cost in TaskCost.allCases where load.inFlight[cost] > load.places(cost) {
                    return "a coordinator on n\(index) has \(load.inFlight[cost]) \(cost) attempts out on \(load.node), which has \(load.places(cost)) slots and queue places"
                }
            }
            seen.placements.append(CheckedPlacement(systems: systems, changes: changes))
        }
        return nil
    }

    // MARK: Replicas

    /// A group's task ends, in task order, into its state's fingerprint and its counted results.
    private static func count(
        _ ends: [Int: TaskJobReport.TaskEnd], of group: String, in hasher: inout Hasher, results: inout [(key: String, result: String)]
    ) {
        for (task, end) in ends.sorted(by: { $0.key < $1.key }) {
            hasher.combine(task)
            hasher.combine(end)
            results.append(("\(group)/task \(task)", "\(end.output ?? "no output") from \(end.node ?? "no node")"))
        }
    }

    /// A bike book's counted results: each user's accepted ending and attempt.
    private static func count(_ book: BikeJobBook, of group: String, results: inout [(key: String, result: String)]) {
        for (user, entry) in book.entries.enumerated() {
            // The ending by its raw value (its case's name): interpolated, the enum was
            // printed through reflection, a search of its conformances each time.
            if let accepted = entry.accepted { results.append(("\(group)/user \(user)", "\(accepted.rawValue) from attempt \(entry.attempt)")) }
        }
    }

    /// A bike job's book (in a job of the one desk's group): as ``check(_:of:network:on:)``,
    /// its network read once from the job's spec.
    private func checkBikes(_ book: BikeJobBook, of job: JobMachine, group: String, on index: Int) -> String? {
        guard let spec = job.spec else { return nil }
        let network = state.withLock { $0.bikeNetworks[group] } ?? {
            let decoded = spec.workload.flatMap { try? MachineText.decode(BikeJob.self, from: $0.parameters) }?.network
            if let decoded { state.withLock { $0.bikeNetworks[group] = decoded } }
            return decoded
        }()
        guard let network else { return "n\(index)'s replica of \(group) carries a bike book, and its spec no bike job" }
        return Self.check(book, of: spec.id, network: network, on: index)
    }

    /// A bike book conserves the bikes of `network` and keeps every station between
    /// empty and full.
    private static func check(_ book: BikeJobBook, of job: String, network: Network, on index: Int) -> String? {
        let total = network.stations.reduce(0) { $0 + $1.freeBikes }
        if book.bikesInPlay != total {
            return "bikes not conserved: n\(index)'s replica of \(job) has \(book.bikesInPlay) bikes in play, of \(total)"
        }
        if book.stations.count == network.stations.count {
            for (station, start) in zip(book.stations, network.stations) where station.freeBikes < 0 || station.freeBikes > start.capacity {
                return "n\(index)'s replica of \(job): station \(station.name) holds \(station.freeBikes) bikes, in \(start.capacity) docks"
            }
        }
        return nil
    }

    private func checkReplicas(_ index: Int, _ assembly: NodeAssembly) async -> String? {
        let incarnation = assembly.node.system.node
        // A machine changes only with its applied index: this runs only once a group here
        // opened or applied something since the last check (``changedSinceChecked(_:_:)``),
        // and a group whose applied index stayed where it was checked is not read again.
        let appliedChanges = assembly.raft.appliedChanges.value
        // A member of the release before has no machine for this release's job groups: it
        // must never be asked to hold one (`--scenario upgrade`).
        if assembly.node.settings.protocolVersions.highest < ProtocolVersions.oneJobLayer,
           let group = assembly.raft.groupIDs.first(where: { ReplicaGroupView.parse($0).kind == ReplicatedTaskJobs.groupKind }) {
            return "n\(index) speaks protocols below \(ProtocolVersions.oneJobLayer) and holds \(group), a group kind its release cannot read"
        }
        for group in assembly.raft.groupIDs {
            let replica = Replica(node: incarnation, group: group)
            guard let published = assembly.raft.appliedIndex(of: group) else { continue }
            if state.withLock({ $0.lastApplied[replica] }) == published { continue }
            guard let (status, machine) = await assembly.raft.statusAndMachine(of: group) else { continue }
            let applied = status.appliedIndex
            if state.withLock({ $0.lastApplied[replica] }) == applied { continue }
            var hasher = Hasher()
            var results: [(key: String, result: String)] = []
            if let tasks = machine as? TaskJobMachine {
                hasher.combine(tasks.spec?.inputs)
                Self.count(tasks.ends, of: group, in: &hasher, results: &results)
                hasher.combine(tasks.cancelReason)
                hasher.combine(tasks.finished)
            } else if let bikes = machine as? BikeJobMachine {
                if let broken = Self.check(bikes, on: index) { return broken }
                hasher.combine(bikes.book)
                hasher.combine(bikes.epoch)
                hasher.combine(bikes.cancelReason)
                hasher.combine(bikes.finished)
                if let book = bikes.book { Self.count(book, of: group, results: &results) }
            } else if let job = machine as? JobMachine {
                hasher.combine(job.spec)
                hasher.combine(job.epoch)
                Self.count(job.ends, of: group, in: &hasher, results: &results)
                hasher.combine(job.cancelReason)
                hasher.combine(job.finished)
                if let book = job.workloadState as? BikeJobBook {
                    if let broken = checkBikes(book, of: job, group: group, on: index) { return broken }
                    hasher.combine(book)
                    Self.count(book, of: group, results: &results)
                } else {
                    hasher.combine(job.workloadState?.snapshot())
                }
                if job.refusedBatches > 0 {
                    let state = job.workloadState is BikeJobBook ? "a book" : "a state"
                    return "n\(index)'s replica of \(group) refused \(job.refusedBatches) committed batch(es): a coordinator made a batch from \(state) that is not the committed one"
                }
            } else {
                continue
            }
            let fingerprint = hasher.finalize()
            let broken: String? = state.withLock { state in
                state.lastApplied[replica] = applied
                let at = "\(group)@\(applied)"
                if let first = state.fingerprints[at], first.fingerprint != fingerprint {
                    return "n\(index)'s replica of \(group) holds another state than n\(first.node)'s at applied index \(applied): a replica holds a state the committed log does not give"
                }
                state.fingerprints[at] = state.fingerprints[at] ?? (index, fingerprint)
                for (key, result) in results {
                    if let first = state.counted[key], first.result != result {
                        return "\(key)'s result counted twice: n\(index)'s replica holds \(result), n\(first.node)'s held \(first.result)"
                    }
                    state.counted[key] = state.counted[key] ?? (index, result)
                }
                return nil
            }
            if let broken { return broken }
        }
        state.withLock { state in
            var seen = state.unchanged(incarnation, at: index)
            seen.replicas = appliedChanges
            state.set(seen, at: index)
        }
        return nil
    }

    /// A bike job's replica: its book conserves bikes, keeps every station between empty
    /// and full, and its machine refused no committed event.
    private static func check(_ machine: BikeJobMachine, on index: Int) -> String? {
        guard let job = machine.job, let book = machine.book else { return nil }
        if let broken = check(book, of: job.id, network: job.network, on: index) { return broken }
        if machine.refusedEvents > 0 {
            return "n\(index)'s replica of \(job.id) refused \(machine.refusedEvents) event(s) of committed batches: a coordinator made a batch from a book that is not the committed one"
        }
        return nil
    }
}
