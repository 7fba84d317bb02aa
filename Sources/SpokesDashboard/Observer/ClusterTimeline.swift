import SpokesCluster

/// The task stream of a whole cluster, put together from each node's
/// ``NodeObservation``s on one clock: the serving node's. Sans-IO: observations and
/// times go in, spans come out.
///
/// Each node reports times on its own monotonic clock. When an observation arrives, the
/// node's `now` is taken to be the midpoint of the poll (sent + received) / 2 on the
/// serving node's clock; the offset from the poll with the shortest round trip seen is
/// kept, since a short poll bounds the error best (at most half its round trip).
///
/// Invariants: a node's ended spans are kept once each (by sequence), only as far back
/// as ``DashboardSnapshot/timelineSeconds`` and at most ``maximumSpans`` in all; a node
/// whose sequence or uptime goes back has restarted, and its old spans are dropped.
///
/// It also follows the leaders of replicated groups (``observeGroups(_:at:)``) and records
/// each change of leader as a ``FailoverView``: as far back as
/// ``DashboardSnapshot/failoverSeconds``, at most ``maximumFailovers``.
public struct ClusterTimeline: Sendable {
    /// The last leader seen of one group, and in which term.
    private struct GroupTrack: Sendable {
        var leader: String?
        var term: Int
        var seenAt: Double
    }

    private struct NodeTrack: Sendable {
        var offset: Double
        var bestRoundTrip: Double
        var measuredAt: Double
        var lastSequence: UInt64 = 0
        var uptime = 0.0
        var ended: [TaskSpanView] = []
        var running: [TaskSpanView] = []
    }

    /// Most ended spans kept per node.
    public let maximumSpans: Int
    /// An offset measured with a longer round trip replaces the kept one after this many
    /// seconds, so a drifting clock is followed.
    public static let offsetLifetime = 30.0
    private var tracks: [String: NodeTrack] = [:]
    private var groups: [String: GroupTrack] = [:]
    private var recordedFailovers: [FailoverView] = []
    /// Most failovers kept.
    public static let maximumFailovers = 100

    public init(maximumSpans: Int = 5_000) {
        self.maximumSpans = maximumSpans
    }

    /// The sequence to ask `node` for next (0 at first).
    public func lastSequence(of node: String) -> UInt64 {
        tracks[node]?.lastSequence ?? 0
    }

    /// The offset that turns `node`'s clock into the serving node's, once known.
    public func offset(of node: String) -> Double? {
        tracks[node]?.offset
    }

    /// Takes in what `observation.node` said to a poll sent at `sentAt` and answered at
    /// `receivedAt` (serving node's clock). `askedAfter` is the sequence the poll asked for.
    public mutating func absorb(_ observation: NodeObservation, askedAfter: UInt64, sentAt: Double, receivedAt: Double) {
        let name = observation.node
        let roundTrip = max(0, receivedAt - sentAt)
        let offset = (sentAt + receivedAt) / 2 - observation.now
        var track = tracks[name] ?? NodeTrack(offset: offset, bestRoundTrip: roundTrip, measuredAt: receivedAt)
        if observation.lastTaskSequence < askedAfter || observation.uptime < track.uptime {
            // The node restarted: its sequence began again, and so did its clock.
            track = NodeTrack(offset: offset, bestRoundTrip: roundTrip, measuredAt: receivedAt)
        } else if roundTrip <= track.bestRoundTrip || receivedAt - track.measuredAt > Self.offsetLifetime {
            track.offset = offset
            track.bestRoundTrip = roundTrip
            track.measuredAt = receivedAt
        }
        let onServingClock = track.offset
        var running: [TaskSpanView] = []
        for span in observation.tasks {
            let view = TaskSpanView(
                node: name, slot: span.slot, job: span.job, task: span.task, attempt: span.attempt,
                start: span.start + onServingClock, end: span.end.map { $0 + onServingClock }, outcome: span.outcome.rawValue)
            if span.outcome == .running {
                running.append(view)
            } else if span.sequence > track.lastSequence {
                track.ended.append(view)
            }
        }
        track.running = running
        track.lastSequence = observation.lastTaskSequence
        track.uptime = observation.uptime
        if track.ended.count > maximumSpans { track.ended.removeFirst(track.ended.count - maximumSpans) }
        tracks[name] = track
    }

    /// Forgets a node that left the cluster.
    public mutating func forget(_ node: String) {
        tracks[node] = nil
    }

    /// The nodes heard from, by name.
    public var nodes: [String] { tracks.keys.sorted() }

    /// Every span that ended within the last ``DashboardSnapshot/timelineSeconds`` before
    /// `now`, and every running one, ordered by start: the newest `limit` of them, so a
    /// page is never sent more bars than it can draw. Drops older spans for good.
    public mutating func spans(now: Double, limit: Int = 3_000) -> [TaskSpanView] {
        let horizon = now - DashboardSnapshot.timelineSeconds
        var all: [TaskSpanView] = []
        for name in tracks.keys {
            tracks[name]!.ended.removeAll { ($0.end ?? now) < horizon }
            all += tracks[name]!.ended + tracks[name]!.running
        }
        return Array(all.sorted { ($0.start, $0.node, $0.slot) < ($1.start, $1.node, $1.slot) }.suffix(max(0, limit)))
    }

    /// Takes in the replicated groups as seen at `time` (serving node's clock): one view
    /// per group, the most informed one (``ReplicaGroupView/mostInformed(_:)``). Records a
    /// ``FailoverView`` when a group's leader is another node than the last leader seen,
    /// in a later term (Raft has one leader per term); views without a leader (an
    /// election) or from an older term change nothing, so `n1`, none, `n3` is one failover
    /// from `n1` to `n3`, and `n1` elected again is none. The first leader seen of a group
    /// is not a failover. Groups not seen for
    /// ``DashboardSnapshot/timelineSeconds`` are forgotten (a finished job's).
    public mutating func observeGroups(_ views: [ReplicaGroupView], at time: Double) {
        for view in views {
            guard var track = groups[view.id] else {
                groups[view.id] = GroupTrack(leader: view.leader, term: view.term, seenAt: time)
                continue
            }
            track.seenAt = time
            if let leader = view.leader, view.term > track.term || (track.leader == nil && view.term == track.term) {
                if let previous = track.leader, previous != leader {
                    recordedFailovers.append(FailoverView(time: time, group: view.id, job: view.job, from: previous, to: leader, term: view.term))
                }
                track.leader = leader
                track.term = view.term
            }
            groups[view.id] = track
        }
        let horizon = time - DashboardSnapshot.timelineSeconds
        groups = groups.filter { $0.value.seenAt >= horizon }
        if recordedFailovers.count > Self.maximumFailovers { recordedFailovers.removeFirst(recordedFailovers.count - Self.maximumFailovers) }
    }

    /// The failovers recorded within ``DashboardSnapshot/failoverSeconds`` before `now`,
    /// oldest first. Drops older ones for good.
    public mutating func failovers(now: Double) -> [FailoverView] {
        let horizon = now - DashboardSnapshot.failoverSeconds
        recordedFailovers.removeAll { $0.time < horizon }
        return recordedFailovers
    }
}
