import SpokesCluster
import SpokesConcurrency
import SpokesConsensus
import Synchronization

/// One replica of one group on this node: a `RaftDriver` (the replica under
/// `RaftAction`'s contract, the same code the simulator drives), its `RaftStorage` and
/// its state machine, behind an actor (the group's executor: inputs are handled one at a
/// time). The runner only performs the driver's effects: flushes run one batch at a time
/// on a thread of their own (`runBlocking`: never on the cooperative pool); sends go to
/// the outbox; committed entries go to the state machine in order, once, and resolve the
/// proposals waiting on them; its timer ticks when the driver says.
actor RaftGroupRunner {
    private struct Waiter {
        var term: Int
        var promise: Promise<RaftCommit, RaftHostError>
    }

    let id: String
    /// The group's replicas (and first leader), as it was opened with; its replicas now
    /// are the status's (a change through the log may have replaced some).
    let definition: RaftGroup
    private let node: String
    private var driver: RaftDriver
    private var replica: RaftReplica { driver.replica }
    private let storage: RaftStorage
    private var machine: any ReplicatedStateMachine
    private let outbox: RaftOutbox
    /// The node's clock and timers.
    private let runtime: Runtime
    private let log: @Sendable (String, LogLevel) -> Void
    /// Told once when the replica stops because its storage failed (the host starts it
    /// again from its disk, ``RaftHost``).
    private let onStorageFailure: @Sendable () -> Void

    /// The replica's applied index as its machine holds it, stored at the end of every
    /// ``perform(_:)`` (the only way the driver's applied index or the machine moves).
    private let appliedIndexNow: Atomic<Int>
    /// The host's count of applied indices moved (``RaftHost/appliedChanges``), bumped
    /// when this replica's moves.
    private let appliedChanges: ChangeCount

    private var waiters: [Int: Waiter] = [:]
    private var failure: String?
    /// The last index of the log on this replica's disk: what it recovered, then where each flush ended.
    private var durableIndex: Int
    private var stopped = false
    private var ticking: Task<Void, Never>?

    init(
        id: String, node: String, replica: RaftReplica, storage: RaftStorage, machine: any ReplicatedStateMachine,
        settings: RaftHostSettings, outbox: RaftOutbox, runtime: Runtime, appliedChanges: ChangeCount,
        log: @escaping @Sendable (String, LogLevel) -> Void, onStorageFailure: @escaping @Sendable () -> Void = {}
    ) {
        self.onStorageFailure = onStorageFailure
        self.runtime = runtime
        self.id = id
        self.node = node
        driver = RaftDriver(replica: replica, compactEvery: settings.snapshotEvery)
        definition = replica.group
        self.storage = storage
        self.machine = machine
        self.outbox = outbox
        self.log = log
        appliedIndexNow = Atomic(replica.appliedIndex)
        durableIndex = replica.lastLogPosition.index
        self.appliedChanges = appliedChanges
    }

    /// The replica's applied index at the end of this actor's last turn, read without a
    /// hop onto it (``RaftHost/appliedIndex(of:)``): a reader that saw this index before
    /// knows the machine has not changed since (a snapshot moves the index too).
    nonisolated var appliedIndex: Int { appliedIndexNow.load(ordering: .acquiring) }

    /// Starts the replica and its timer, which ticks when the driver says, on the
    /// runtime's protocol thread (never behind user tasks on the pool). Once: a runner
    /// started already (or stopped) is left as it is.
    func start() {
        guard ticking == nil, !stopped else { return }
        perform(driver.start(now: runtime.now))
        let runtime = runtime
        ticking = runtime.protocolTask { [weak self] in
            while !Task.isCancelled {
                guard let self, let wait = await self.tick() else { return }
                try? await runtime.protocolSleep(for: wait)
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
        // Each field read in place (through ``replica``, each read copied the whole replica).
        RaftGroupStatus(
            group: id, replica: node, role: driver.replica.role, term: driver.replica.term, leader: driver.replica.leader, replicas: driver.replica.replicas,
            replicasCommitted: driver.replica.replicasCommitted, commitIndex: driver.replica.commitIndex, appliedIndex: driver.replica.appliedIndex,
            lastIndex: driver.replica.lastLogPosition.index, durableIndex: durableIndex, failure: failure,
            followersLastHeard: driver.replica.role == .leader ? driver.replica.followersLastHeard : nil)
    }

    var stateMachine: any ReplicatedStateMachine { machine }

    /// The status and the state machine at one moment (one turn of this actor).
    var statusAndMachine: (status: RaftGroupStatus, machine: any ReplicatedStateMachine) { (status, machine) }

    /// Seconds until the next tick, or nil once stopped.
    private func tick() -> Double? {
        guard !stopped, failure == nil else { return nil }
        let now = runtime.now
        perform(driver.tick(now: now))
        return driver.nextTick(after: now)
    }

    func receive(_ messages: [RaftMessage], from sender: String) {
        guard !stopped, failure == nil else { return }
        // Held but not started (a new group's first leader, see `RaftHost.open`): a
        // message means a peer has it open, so it starts now.
        start()
        for message in messages {
            perform(driver.receive(message, from: sender, now: runtime.now))
        }
    }

    /// Appends `command` if this replica leads; the future completes once an entry is
    /// applied at its index (with the result, or `lostInLeaderChange` if that entry is
    /// another term's).
    func propose(_ command: String) throws(RaftHostError) -> (index: Int, commit: Future<RaftCommit, RaftHostError>) {
        guard !stopped else { throw .stopped(node: node) }
        if let failure { throw .replicaFailed(group: id, node: node, reason: failure) }
        start()
        let (proposal, effects) = driver.propose([command], now: runtime.now)
        return try waitFor(proposal, effects)
    }

    /// Appends a configuration entry that makes `replicas` the group's replicas
    /// (``RaftReplica/proposeReplicas(_:now:)``); the future completes once it is applied
    /// here, as for ``propose(_:)``.
    func proposeReplicas(_ replicas: [String]) throws(RaftHostError) -> (index: Int, commit: Future<RaftCommit, RaftHostError>) {
        guard !stopped else { throw .stopped(node: node) }
        if let failure { throw .replicaFailed(group: id, node: node, reason: failure) }
        let proposal: RaftProposal
        let effects: [RaftDriver.Effect]
        do {
            (proposal, effects) = try driver.proposeReplicas(replicas, now: runtime.now)
        } catch {
            throw .changeRefused(group: id, reason: error.description)
        }
        return try waitFor(proposal, effects)
    }

    /// Registers a waiter for an accepted proposal's entry, then performs its effects.
    private func waitFor(_ proposal: RaftProposal, _ effects: [RaftDriver.Effect]) throws(RaftHostError) -> (index: Int, commit: Future<RaftCommit, RaftHostError>) {
        switch proposal {
        case .notLeader(let hint):
            perform(effects)
            throw .notLeader(group: id, node: node, leader: hint)
        case .accepted(let term, let indices):
            let promise = Promise<RaftCommit, RaftHostError>()
            waiters[indices.lowerBound] = Waiter(term: term, promise: promise)
            perform(effects)
            return (indices.lowerBound, promise.future)
        }
    }

    /// The proposer stopped waiting for index `index`.
    func abandon(_ index: Int) {
        waiters[index] = nil
    }

    func transferLeadership(to target: String) {
        guard !stopped, failure == nil else { return }
        perform(driver.transferLeadership(to: target, now: runtime.now))
    }

    // MARK: - Performing the driver's effects

    private func perform(_ effects: [RaftDriver.Effect]) {
        defer { publishAppliedIndex() }
        for effect in effects {
            guard !stopped, failure == nil else { return }
            switch effect {
            case .wrote:
                break
            case .flush(let batch, let writes):
                flush(batch: batch, writes)
            case .send(let peer, let messages):
                outbox.send(messages, of: id, to: peer)
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
        guard !stopped, failure == nil else { return }
        let machine = machine
        let compaction = driver.compactIfDue { machine.snapshot() }
        if !compaction.isEmpty { perform(compaction) }
    }

    /// Stores the applied index for readers off this actor (``appliedIndex``), and counts
    /// a move in the host's ``RaftHost/appliedChanges``.
    private func publishAppliedIndex() {
        let applied = driver.replica.appliedIndex
        if appliedIndexNow.exchange(applied, ordering: .acquiringAndReleasing) != applied { appliedChanges.bump() }
    }

    private func apply(_ entry: RaftEntry) {
        // A configuration entry's result names the replicas it made.
        let result = entry.command.map { machine.apply($0) } ?? entry.replicas.map { "replicas \($0.joined(separator: ", "))" }
        guard let waiter = waiters.removeValue(forKey: entry.index) else { return }
        if entry.term == waiter.term, let result {
            waiter.promise.resolve(RaftCommit(group: id, index: entry.index, term: entry.term, result: result))
        } else {
            waiter.promise.reject(.lostInLeaderChange(group: id, index: entry.index))
        }
    }

    /// Writes and syncs one batch on a thread of its own, then tells the driver.
    private func flush(batch: Int, _ writes: [RaftWrite]) {
        let storage = storage
        // Told back on the protocol thread: a flush's end needs no pool thread either.
        runtime.protocolTask { [self] in
            let result = await runBlocking("spokes.raft.flush") { () -> Result<RaftLogPosition, RaftStorageError> in
                do throws(RaftStorageError) {
                    for write in writes { try storage.write(write) }
                    return .success(try storage.sync())
                } catch {
                    return .failure(error)
                }
            }
            await self.flushed(batch: batch, result)
        }
    }

    private func flushed(batch: Int, _ result: Result<RaftLogPosition, RaftStorageError>) {
        guard !stopped, failure == nil else { return }
        switch result {
        case .success(let position):
            durableIndex = position.index
            perform(driver.flushed(batch: batch, through: position, now: runtime.now))
        case .failure(let error):
            fail("its storage failed: \(error)")
            onStorageFailure()
        }
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
