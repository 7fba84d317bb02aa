import SpokesCluster
import SpokesConcurrency
import SpokesConsensus

/// One replica of one group on this node: the `RaftReplica`, its `RaftStorage` and its
/// state machine, behind an actor (the group's executor: inputs are handled one at a
/// time). It keeps `RaftAction`'s contract the way `SpokesSimulation`'s model does:
/// writes are queued and flushed one batch at a time on a thread of their own
/// (`runBlocking`: group commit, never on the cooperative pool); a send waits until
/// every write issued before it is durable; after each flush the replica hears
/// `persisted(through:term:now:)`; committed entries go to the state machine in order,
/// once, and resolve the proposals waiting on them.
actor RaftGroupRunner {
    private struct Waiter {
        var term: Int
        var promise: Promise<RaftCommit, RaftHostError>
    }

    let id: String
    /// The group's replicas (and first leader), as it was opened with.
    let definition: RaftGroup
    private let node: String
    private var replica: RaftReplica
    private let storage: RaftStorage
    private var machine: any ReplicatedStateMachine
    private let settings: RaftHostSettings
    private let outbox: RaftOutbox
    private let log: @Sendable (String, LogLevel) -> Void

    private var issued = 0
    private var durable = 0
    private var unflushed: [RaftWrite] = []
    private var flushing = false
    private var held: [(after: Int, to: String, message: RaftMessage)] = []
    private var waiters: [Int: Waiter] = [:]
    private var failure: String?
    private var stopped = false
    private var ticking: Task<Void, Never>?
    /// When the last tick ran, to tell a stall of this node's timers.
    private var lastTick: Double?

    init(
        id: String, node: String, replica: RaftReplica, storage: RaftStorage, machine: any ReplicatedStateMachine,
        settings: RaftHostSettings, outbox: RaftOutbox, log: @escaping @Sendable (String, LogLevel) -> Void
    ) {
        self.id = id
        self.node = node
        self.replica = replica
        definition = replica.group
        self.storage = storage
        self.machine = machine
        self.settings = settings
        self.outbox = outbox
        self.log = log
    }

    /// Starts the replica and its timer: ticks at the replica's next deadline, at least
    /// every heartbeat interval.
    func start() {
        run(replica.start(now: MonotonicClock.now))
        ticking = Task { [weak self] in
            while !Task.isCancelled {
                guard let self, let wait = await self.tick() else { return }
                try? await Task.sleep(for: .clamped(seconds: wait))
            }
        }
    }

    /// Stops ticking, closes the storage (writes not yet flushed are lost, as in a
    /// crash) and fails the proposals still waiting.
    func stop() async {
        stopped = true
        ticking?.cancel()
        failWaiters(.stopped(node: node))
        // Waits for a flush in progress (the storage's lock): not on the pool.
        let storage = storage
        await runBlocking("spokes.raft.close") { storage.close() }
    }

    var status: RaftGroupStatus {
        RaftGroupStatus(
            group: id, replica: node, role: replica.role, term: replica.term, leader: replica.leader, commitIndex: replica.commitIndex,
            appliedIndex: replica.appliedIndex, lastIndex: replica.lastLogPosition.index, failure: failure)
    }

    var stateMachine: any ReplicatedStateMachine { machine }

    /// Seconds until the next tick, or nil once stopped. A tick comes at least every
    /// heartbeat interval; one more than three intervals after the last means this node's
    /// timers stalled (``RaftReplica/timersResumed(now:)``).
    private func tick() -> Double? {
        guard !stopped, failure == nil else { return nil }
        let now = MonotonicClock.now
        if let lastTick, now - lastTick > 3 * settings.raft.heartbeatInterval {
            run(replica.timersResumed(now: now))
        }
        lastTick = now
        run(replica.tick(now: now))
        return max(0.001, min(replica.nextDeadline - now, settings.raft.heartbeatInterval))
    }

    func receive(_ messages: [RaftMessage], from sender: String) {
        guard !stopped, failure == nil else { return }
        for message in messages {
            run(replica.receive(message, from: sender, now: MonotonicClock.now))
        }
    }

    /// Appends `command` if this replica leads; the future completes once an entry is
    /// applied at its index (with the result, or `lostInLeaderChange` if that entry is
    /// another term's).
    func propose(_ command: String) throws(RaftHostError) -> (index: Int, commit: Future<RaftCommit, RaftHostError>) {
        guard !stopped else { throw .stopped(node: node) }
        if let failure { throw .replicaFailed(group: id, node: node, reason: failure) }
        let (proposal, actions) = replica.propose([command], now: MonotonicClock.now)
        switch proposal {
        case .notLeader(let hint):
            run(actions)
            throw .notLeader(group: id, node: node, leader: hint)
        case .accepted(let term, let indices):
            let promise = Promise<RaftCommit, RaftHostError>()
            waiters[indices.lowerBound] = Waiter(term: term, promise: promise)
            run(actions)
            return (indices.lowerBound, promise.future)
        }
    }

    /// The proposer stopped waiting for index `index`.
    func abandon(_ index: Int) {
        waiters[index] = nil
    }

    func transferLeadership(to target: String) {
        guard !stopped, failure == nil else { return }
        run(replica.transferLeadership(to: target, now: MonotonicClock.now))
    }

    // MARK: - Carrying out actions

    private func run(_ actions: [RaftAction]) {
        guard !stopped, failure == nil else { return }
        var outgoing: [(to: String, messages: [RaftMessage])] = []
        func queue(_ message: RaftMessage, to peer: String) {
            if let slot = outgoing.firstIndex(where: { $0.to == peer }) {
                outgoing[slot].messages.append(message)
            } else {
                outgoing.append((peer, [message]))
            }
        }
        for action in actions {
            switch action {
            case .persist(let write):
                issued += 1
                unflushed.append(write)
            case .send(let peer, let message):
                if durable >= issued { queue(message, to: peer) } else { held.append((issued, peer, message)) }
            case .apply(let entries):
                for entry in entries { apply(entry) }
            case .applySnapshot(let snapshot):
                do {
                    try machine.restore(snapshot.data)
                } catch {
                    return fail("its state machine refused the snapshot through \(snapshot.position): \(error)")
                }
                for index in waiters.keys where index <= snapshot.index {
                    waiters.removeValue(forKey: index)?.promise.reject(
                        .outcomeUnknown(group: id, index: index, reason: "a snapshot from the leader replaced the log there"))
                }
            case .stateChanged(let status):
                log("raft \(id): \(node) is \(status)", .debug)
                // Only a leader has waiters. One that stepped down (CheckQuorum: cut off
                // from its majority; or a newer term) cannot tell whether its entries
                // will be committed by a later leader: its proposers hear so now rather
                // than at their deadline, and a cut-off side learns it is cut off.
                if status.role != .leader, !waiters.isEmpty { releaseWaitersOnStepDown() }
            }
        }
        for (peer, messages) in outgoing { outbox.send(messages, of: id, to: peer) }
        startFlush()
        if replica.appliedIndex - replica.snapshotPosition.index >= settings.snapshotEvery,
           let actions = try? replica.compact(through: replica.appliedIndex, snapshot: machine.snapshot()) {
            run(actions)
        }
    }

    private func apply(_ entry: RaftEntry) {
        let result = entry.command.map { machine.apply($0) }
        guard let waiter = waiters.removeValue(forKey: entry.index) else { return }
        if entry.term == waiter.term, let result {
            waiter.promise.resolve(RaftCommit(group: id, index: entry.index, term: entry.term, result: result))
        } else {
            waiter.promise.reject(.lostInLeaderChange(group: id, index: entry.index))
        }
    }

    /// Group commit: one flush at a time takes every write issued so far.
    private func startFlush() {
        guard !flushing, !unflushed.isEmpty, !stopped, failure == nil else { return }
        flushing = true
        let batch = issued
        let writes = unflushed
        unflushed = []
        let storage = storage
        Task {
            let result = await runBlocking("spokes.raft.flush") { () -> Result<RaftLogPosition, RaftStorageError> in
                do throws(RaftStorageError) {
                    for write in writes { try storage.write(write) }
                    return .success(try storage.sync())
                } catch {
                    return .failure(error)
                }
            }
            self.flushed(batch: batch, result)
        }
    }

    private func flushed(batch: Int, _ result: Result<RaftLogPosition, RaftStorageError>) {
        flushing = false
        guard !stopped, failure == nil else { return }
        let position: RaftLogPosition
        switch result {
        case .success(let last): position = last
        case .failure(let error): return fail("its storage failed: \(error)")
        }
        durable = batch
        let ready = held.prefix { $0.after <= batch }
        held.removeFirst(ready.count)
        var outgoing: [(to: String, messages: [RaftMessage])] = []
        for send in ready {
            if let slot = outgoing.firstIndex(where: { $0.to == send.to }) {
                outgoing[slot].messages.append(send.message)
            } else {
                outgoing.append((send.to, [send.message]))
            }
        }
        for (peer, messages) in outgoing { outbox.send(messages, of: id, to: peer) }
        run(replica.persisted(through: position.index, term: position.term, now: MonotonicClock.now))
        startFlush()
    }

    /// The replica cannot go on (what is on disk is unknown, or its state machine is
    /// broken): it stops taking part, and says why.
    private func fail(_ reason: String) {
        guard failure == nil else { return }
        failure = reason
        ticking?.cancel()
        log("raft \(id): the replica on \(node) stopped: \(reason)", .error)
        failWaiters(.replicaFailed(group: id, node: node, reason: reason))
    }

    private func failWaiters(_ error: RaftHostError) {
        let failing = waiters
        waiters = [:]
        for (_, waiter) in failing { waiter.promise.reject(error) }
    }

    private func releaseWaitersOnStepDown() {
        let failing = waiters
        waiters = [:]
        for (index, waiter) in failing {
            waiter.promise.reject(.outcomeUnknown(group: id, index: index, reason: "\(node) stopped leading before it committed; a later leader may still commit it"))
        }
    }
}
