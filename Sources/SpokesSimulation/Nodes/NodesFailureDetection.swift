import SpokesCluster
import SpokesConcurrency
import SpokesSimulatedCluster
import Synchronization

/// The failure detector's completeness on the real nodes of a seed of ``NodesModel``
/// (what the deleted `MembershipModel` checked on its copy, issue 28 §2): a member nothing
/// has arrived from, at an observer, for longer than the suspect timeout is not shown
/// alive by that observer once its own ticks have run on time for the suspect timeout
/// plus a heartbeat interval. A paused observer, or one whose timers ran late, measured
/// a silence of its own: it judges nobody on it (``Membership``'s `lateTickAfter` rule)
/// and is exempt until it has been steady that long again.
///
/// What arrived is what the network handed the observer's host (``SimulatedNetwork/observeDeliveries(_:)``),
/// on the observer's clock, never what the node says it heard. An arrival from a member
/// is what the membership can take as news of it, and a little more (so the check never
/// blames a node for news it did get):
/// - any chunk of a stream from the member's host: a whole frame on its connection
///   refreshes it (`Connection.lastReceived`, fed to the membership on each tick);
///   counting every chunk (a frame's first part too) keeps the record at least as
///   recent as the frames the membership heard;
/// - any datagram from the member's host: a direct answer to a probe (`Prober`'s
///   `answered`); beacons and pings are counted too (a beacon of a member whose
///   connection the membership missed makes the shell take the connection as news);
/// - a probe ack about the member from another host: a helper passing on the member's
///   answer to an indirect probe (SWIM), which the membership takes as news of it; the
///   datagram is opened (``ProbeSeal``) to read whom it is about.
///
/// When the observer's ticks came is its membership's own record (``ClusterNode/membersAtTick(after:)``),
/// judged late by its own `lateTickAfter`. Each tick is judged once, right after it (the
/// check runs after every event), silence as of that tick: when the membership last
/// checked its timeouts, so a member that fell silent since is not blamed yet.
/// The bounds are the cluster's (every node is configured alike), so a node whose own
/// settings would let it keep a silent member alive is caught
/// (``NodesModel/Options/slowSuspicionOf``).
final class NodesFailureDetection: Sendable {
    /// A host that received a probe ack, and the incarnation the ack was about.
    private struct Vouched: Hashable {
        var receiver: Int
        var member: NodeID
    }

    /// The receiving end of each node's host: its clock (every incarnation's at that
    /// host), the port it takes probes on, and the seal that opens them.
    private struct Host {
        var clock: any RuntimeClock
        var probePort: UInt16
        var seal: ProbeSeal
    }

    /// An observer incarnation's ticks as this check saw them: the last one, and since
    /// when they have come on time.
    private struct Steadiness {
        var lastTick: Double
        var since: Double
    }

    private struct State {
        /// When something from a host last arrived at a node's host, on the receiver's
        /// clock: by the receiver's index, then the sender's (hosts by index,
        /// ``SimulatedCluster/host(_:)``; a client's host may be past the nodes'), nil
        /// for none. Arrays, not a dictionary: it is written at every delivery.
        var arrived: [[Double?]]

        /// When something from `sender` last arrived at `receiver`.
        func arrival(at receiver: Int, from sender: Int) -> Double? {
            receiver < arrived.count && sender < arrived[receiver].count ? arrived[receiver][sender] : nil
        }

        mutating func arrived(at receiver: Int, from sender: Int, _ now: Double) {
            if sender >= arrived[receiver].count { arrived[receiver] += Array(repeating: nil, count: sender + 1 - arrived[receiver].count) }
            arrived[receiver][sender] = now
        }

        /// When a probe ack about `member` last arrived at `receiver`, on its clock.
        var vouched: [Vouched: Double] = [:]
        /// Each observer incarnation's ticks, by the observer's index (read after every
        /// event for every node: an array, not a dictionary keyed by incarnation). An
        /// incarnation that replaced another at an index starts with none.
        var steadiness: [(observer: NodeID, ticks: Steadiness)?] = []

        func steadiness(of observer: NodeID, at index: Int) -> Steadiness? {
            guard index < steadiness.count, let kept = steadiness[index], kept.observer == observer else { return nil }
            return kept.ticks
        }

        mutating func set(_ ticks: Steadiness, of observer: NodeID, at index: Int) {
            if index >= steadiness.count { steadiness += Array(repeating: nil, count: index + 1 - steadiness.count) }
            steadiness[index] = (observer, ticks)
        }
    }

    /// Each node's host, by index.
    private let hosts: [Host]
    private let state: Mutex<State>
    /// The cluster's suspect timeout and heartbeat interval.
    let suspectTimeout: Double
    let heartbeatInterval: Double
    /// The shared clock's reading when the run began: times in messages count from it.
    private let origin: Double

    /// Records what `cluster`'s network hands its nodes' hosts from now on (it becomes
    /// the network's delivery observer), for a cluster whose nodes suspect a member after
    /// `suspectTimeout` seconds of silence and tick every `heartbeatInterval`.
    init(cluster: SimulatedCluster, suspectTimeout: Double, heartbeatInterval: Double) {
        hosts = cluster.nodes.map { node in
            Host(clock: node.system.runtime.clock, probePort: node.settings.port, seal: ProbeSeal(keyring: node.system.keyring))
        }
        self.suspectTimeout = suspectTimeout
        self.heartbeatInterval = heartbeatInterval
        origin = cluster.clock.now
        state = Mutex(State(arrived: Array(repeating: [], count: hosts.count)))
        // The network keeps this alive; this keeps nothing of the network's.
        cluster.network.observeDeliveries { delivery in self.arrived(delivery) }
    }

    /// Something was handed to a reader at a node's host: an arrival from its sender's
    /// host, and, for a probe ack, news of the member it is about.
    private func arrived(_ delivery: SimulatedNetwork.Delivery) {
        switch delivery {
        case .chunk(let from, let to):
            guard let receiver = SimulatedCluster.hostIndex(of: to), receiver < hosts.count,
                  let sender = SimulatedCluster.hostIndex(of: from) else { return }
            let now = hosts[receiver].clock.now
            state.withLock { $0.arrived(at: receiver, from: sender, now) }
        case .datagram(let bytes, let from, let to):
            guard let receiver = SimulatedCluster.hostIndex(of: to.host), receiver < hosts.count,
                  let sender = SimulatedCluster.hostIndex(of: from.host) else { return }
            let host = hosts[receiver]
            let now = host.clock.now
            var about: NodeID?
            if to.port == host.probePort, case .accepted(.ack(_, _, let member)) = host.seal.open(bytes) { about = member }
            state.withLock { state in
                state.arrived(at: receiver, from: sender, now)
                if let about { state.vouched[Vouched(receiver: receiver, member: about)] = now }
            }
        }
    }

    /// When something from `sender`'s host last arrived at `receiver`'s (nodes by index),
    /// on the receiver's clock; nil if nothing ever did.
    func lastArrival(at receiver: Int, from sender: Int) -> Double? {
        state.withLock { $0.arrival(at: receiver, from: sender) }
    }

    /// The first observer among `observers` (each node's index and running incarnation)
    /// that shows alive a member silent, as of its last tick, for longer than the suspect
    /// timeout while its own ticks ran on time (of its members, the first by name); nil
    /// when none does.
    func check(_ observers: [(index: Int, node: ClusterNode)]) -> String? {
        for (index, node) in observers {
            // Each tick is judged once, after it (as the membership model did), on its
            // members as the check finds them then; read outside this record's lock.
            let me = node.system.node
            let seen = state.withLock { $0.steadiness(of: me, at: index)?.lastTick }
            guard let membership = node.membersAtTick(after: seen) else { continue }
            let tick = membership.tick
            let broken: String? = state.withLock { state in
                var steadiness = state.steadiness(of: me, at: index) ?? Steadiness(lastTick: tick, since: tick)
                // Ticks this check did not see only make the gap longer: never steadier.
                if tick - steadiness.lastTick > membership.lateTickAfter { steadiness.since = tick }
                steadiness.lastTick = tick
                state.set(steadiness, of: me, at: index)
                guard tick - steadiness.since > suspectTimeout + heartbeatInterval else { return nil }
                var silent: (member: Member, heard: Double)?
                for member in membership.members where member.state == .alive {
                    var heard = SimulatedCluster.hostIndex(of: member.address).flatMap { state.arrival(at: index, from: $0) } ?? -.infinity
                    // Only a member silent on its own host's traffic needs a helper's word.
                    if tick - heard > suspectTimeout + 1e-9 {
                        heard = max(heard, state.vouched[Vouched(receiver: index, member: member.node)] ?? -.infinity)
                    }
                    guard tick - heard > suspectTimeout + 1e-9, silent.map({ member.node.name < $0.member.node.name }) ?? true else { continue }
                    silent = (member, heard)
                }
                guard let (member, heard) = silent else { return nil }
                let since = heard == -.infinity ? "nothing ever arrived from it"
                    : "nothing arrived from it for \(fixed(tick - heard, 3)) s (last at \(fixed(heard - origin, 3)) s)"
                return "n\(index) shows \(member.node) alive after its tick at \(fixed(tick - origin, 3)) s, though \(since), "
                    + "over the suspect timeout (\(fixed(suspectTimeout, 3)) s), its own ticks on time since \(fixed(steadiness.since - origin, 3)) s (times on n\(index)'s clock)"
            }
            if let broken { return broken }
        }
        return nil
    }

}
