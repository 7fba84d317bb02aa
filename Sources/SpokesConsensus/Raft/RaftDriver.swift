/// Carries out ``RaftAction``'s contract around one ``RaftReplica``: the one
/// implementation of it, driven by the node's `RaftGroupRunner` and by the simulator's
/// shells alike, so the simulator checks the rules that ship. (Before, the simulator kept
/// a copy of its own; the copy's timer rule alone made a liveness failure the runner did
/// not have.)
///
/// A pure state machine, as the replica is: every input returns ``Effect``s, which the
/// shell performs in the order given, and nothing here reads a clock, sleeps or touches a
/// disk. What the driver decides:
/// - **Persist before send.** A send is held until every write issued before it is
///   durable, then released (rule 1 of ``RaftAction``).
/// - **Group commit.** One flush at a time takes every write issued so far
///   (``Effect/flush(batch:writes:)``); the shell makes them durable and calls
///   ``flushed(batch:through:now:)``, which releases the held sends and tells the replica.
/// - **Timers.** The shell calls ``tick(now:)`` and then waits ``nextTick(after:)``: at
///   the replica's next deadline, and at least every heartbeat interval. A tick more than
///   three heartbeat intervals after the one before means this node's timers stalled (a
///   paused process, an overloaded machine): the replica then judges nobody on that
///   silence (``RaftReplica/timersResumed(now:)``).
/// - **Compaction.** After performing a batch the shell calls
///   ``compactIfDue(snapshot:)`` with its state machine's snapshot.
///
/// Sends to one peer within one batch are gathered into one ``Effect/send(to:_:)``, after
/// the batch's other effects and before its flush.
public struct RaftDriver: Sendable {
    /// What the shell does, in order.
    public enum Effect: Sendable, Hashable {
        /// A write was issued (information, for a checker: the shell writes it when a
        /// flush names it).
        case wrote(RaftWrite)
        /// Make `writes` durable, in order, then call ``flushed(batch:through:now:)``
        /// with `batch`. At most one flush is outstanding.
        case flush(batch: Int, writes: [RaftWrite])
        /// Transmit these messages to `peer` now (every write before them is durable).
        case send(to: String, [RaftMessage])
        /// Committed entries for the state machine, in order.
        case apply([RaftEntry])
        /// Replace the state machine's state.
        case applySnapshot(RaftSnapshot)
        /// The replica's role, term or leader changed.
        case stateChanged(RaftStatus)
    }

    private struct HeldSend: Sendable {
        /// The number of writes that must be durable first.
        var after: Int
        var to: String
        var message: RaftMessage
    }

    public private(set) var replica: RaftReplica
    /// Compact once this many entries were applied since the last snapshot.
    public var compactEvery: Int
    /// Breaks rule 1 on purpose (the simulator's check that its checker catches it).
    public var sendsBeforePersisting = false
    /// Writes issued so far, and how many of them are durable.
    public private(set) var issued = 0
    public private(set) var durable = 0
    /// The flush in progress: what a crash now may have left half written.
    public private(set) var flushing: (batch: Int, writes: [RaftWrite])?
    private var unflushed: [RaftWrite] = []
    private var held: [HeldSend] = []
    private var lastTick: Double?

    public init(replica: RaftReplica, compactEvery: Int = .max) {
        self.replica = replica
        self.compactEvery = max(1, compactEvery)
    }

    /// The heartbeat interval: the longest wait between two ticks.
    public var heartbeatInterval: Double { replica.configuration.heartbeatInterval }

    // MARK: - Inputs

    public mutating func start(now: Double) -> [Effect] {
        lastTick = now
        return run(replica.start(now: now))
    }

    /// A timer fired. Call it again ``nextTick(after:)`` later.
    public mutating func tick(now: Double) -> [Effect] {
        var effects: [Effect] = []
        if let lastTick, now - lastTick > 3 * heartbeatInterval {
            effects += run(replica.timersResumed(now: now))
        }
        lastTick = now
        effects += run(replica.tick(now: now))
        return effects
    }

    /// How long after a tick at `now` the next one is due: at the replica's next deadline,
    /// at most one heartbeat interval, at least a millisecond.
    public func nextTick(after now: Double) -> Double {
        max(0.001, min(replica.nextDeadline - now, heartbeatInterval))
    }

    public mutating func receive(_ message: RaftMessage, from sender: String, now: Double) -> [Effect] {
        run(replica.receive(message, from: sender, now: now))
    }

    public mutating func propose(_ commands: [String], now: Double) -> (RaftProposal, [Effect]) {
        let (proposal, actions) = replica.propose(commands, now: now)
        return (proposal, run(actions))
    }

    /// ``RaftReplica/proposeReplicas(_:now:)``.
    public mutating func proposeReplicas(_ replicas: [String], now: Double) throws(RaftReplica.ConfigurationChangeError) -> (RaftProposal, [Effect]) {
        let (proposal, actions) = try replica.proposeReplicas(replicas, now: now)
        return (proposal, run(actions))
    }

    public mutating func transferLeadership(to target: String, now: Double) -> [Effect] {
        run(replica.transferLeadership(to: target, now: now))
    }

    /// The flush of `batch` finished: storage holds everything through `position`.
    /// Releases the sends that waited for it and starts the next flush.
    public mutating func flushed(batch: Int, through position: RaftLogPosition, now: Double) -> [Effect] {
        guard let flushing, flushing.batch == batch else { return [] }
        self.flushing = nil
        durable = batch
        let ready = held.prefix { $0.after <= batch }
        held.removeFirst(ready.count)
        var effects = Self.gathered(ready.map { ($0.to, $0.message) })
        // `run` starts the next flush, if writes are waiting.
        effects += run(replica.persisted(through: position.index, term: position.term, now: now))
        return effects
    }

    /// Compacts the log into `snapshot()` (the state machine's state after everything
    /// applied so far) once ``compactEvery`` entries were applied since the last one.
    public mutating func compactIfDue(snapshot: () throws -> String) -> [Effect] {
        guard compactionDue,
              let data = try? snapshot(),
              let actions = try? replica.compact(through: replica.appliedIndex, snapshot: data) else { return [] }
        return run(actions)
    }

    /// True once ``compactEvery`` entries were applied since the last snapshot.
    public var compactionDue: Bool { replica.appliedIndex - replica.snapshotPosition.index >= compactEvery }

    // MARK: - The contract

    private mutating func run(_ actions: [RaftAction]) -> [Effect] {
        var effects: [Effect] = []
        var outgoing: [(String, RaftMessage)] = []
        for action in actions {
            switch action {
            case .persist(let write):
                issued += 1
                unflushed.append(write)
                effects.append(.wrote(write))
            case .send(let peer, let message):
                if durable >= issued || sendsBeforePersisting {
                    outgoing.append((peer, message))
                } else {
                    held.append(HeldSend(after: issued, to: peer, message: message))
                }
            case .apply(let entries):
                effects.append(.apply(entries))
            case .applySnapshot(let snapshot):
                effects.append(.applySnapshot(snapshot))
            case .stateChanged(let status):
                effects.append(.stateChanged(status))
            }
        }
        effects += Self.gathered(outgoing)
        if let flush = startFlush() { effects.append(flush) }
        return effects
    }

    private mutating func startFlush() -> Effect? {
        guard flushing == nil, !unflushed.isEmpty else { return nil }
        let writes = unflushed
        unflushed = []
        flushing = (issued, writes)
        return .flush(batch: issued, writes: writes)
    }

    /// One send effect per peer, in the order each peer first appears.
    private static func gathered(_ sends: [(String, RaftMessage)]) -> [Effect] {
        var peers: [String] = []
        var messages: [String: [RaftMessage]] = [:]
        for (peer, message) in sends {
            if messages[peer] == nil { peers.append(peer) }
            messages[peer, default: []].append(message)
        }
        return peers.map { .send(to: $0, messages[$0]!) }
    }
}
