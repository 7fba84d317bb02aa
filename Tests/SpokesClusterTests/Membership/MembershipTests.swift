import Testing
@testable import SpokesCluster

@Suite struct MembershipTests {
    let me = NodeID(name: "a", incarnation: 1)
    let b = NodeID(name: "b", incarnation: 10)

    func fresh() -> Membership {
        Membership(local: me, suspectTimeout: 1, deadTimeout: 2, redialInterval: 1, forgetAfter: 60)
    }

    func states(_ actions: [Membership.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .dial(let address): "dial \(address)"
            case .disconnect(let node): "disconnect \(node.name)"
            case .publish(.joined(let member)): "joined \(member.node.name) \(member.state.rawValue)"
            case .publish(.changed(let member, let from)): "\(member.node.name) \(from.rawValue)->\(member.state.rawValue)"
            case .publish(.removed(let member)): "removed \(member.node.name)#\(member.node.incarnation)"
            case .timersRanLate(let seconds): "late \(seconds)"
            }
        }
    }

    /// Ticks every 0.1 s from `start` through `end` (a node whose timers run on time),
    /// feeding `heard` before each tick as ``ClusterNode`` does; the actions, in order.
    func ticks(_ membership: inout Membership, from start: Double, through end: Double,
               heard: [(NodeID, Double)] = []) -> [String] {
        var actions: [String] = []
        var step = 0
        while start + Double(step) * 0.1 <= end + 1e-9 {
            for (node, at) in heard { actions += states(membership.observe(.heard(node: node), at: at)) }
            actions += states(membership.observe(.tick, at: start + Double(step) * 0.1))
            step += 1
        }
        return actions
    }

    /// Issue 30 §2: a seed that is not up yet is dialled forever, backing off (1, 2, 4, 8,
    /// then every 10 s), and a connection starts the count again; a beacon's node, which
    /// says it is up, is dialled every second.
    @Test func aSeedThatDoesNotConnectIsDialledForeverBackingOffAndAConnectionResetsIt() {
        var membership = fresh()
        var dialled: [Double] = []
        for tenth in 0...600 {
            let now = Double(tenth) / 10
            if !membership.observe(.seed(address: "127.0.0.9:7000"), at: now).isEmpty { dialled.append(now) }
        }
        #expect(dialled == [0, 1, 3, 7, 15, 25, 35, 45, 55], "\(dialled)")
        _ = membership.observe(.connected(node: b, address: "127.0.0.9:7000", slots: 1, waitingSlots: 1), at: 60)
        _ = membership.observe(.left(node: b), at: 61)
        #expect(states(membership.observe(.seed(address: "127.0.0.9:7000"), at: 61.5)) == ["dial 127.0.0.9:7000"])
        #expect(states(membership.observe(.seed(address: "127.0.0.9:7000"), at: 62.6)) == ["dial 127.0.0.9:7000"], "the count started again")
        var beaconDials: [Double] = []
        let c = NodeID(name: "c", incarnation: 3)
        for tenth in 0...100 {
            let now = 100 + Double(tenth) / 10
            if !membership.observe(.beacon(node: c, address: "127.0.0.3:7000", slots: 1, waitingSlots: 1), at: now).filter({ if case .dial = $0 { true } else { false } }).isEmpty {
                beaconDials.append(now)
            }
        }
        #expect(beaconDials.count == 11, "a beacon's node every second: \(beaconDials)")
    }

    @Test func aBeaconOfANewNodeAddsItAsJoiningAndDialsIt() {
        var membership = fresh()
        #expect(states(membership.observe(.beacon(node: b, address: "127.0.0.1:2", slots: 4), at: 0)) == ["joined b joining", "dial 127.0.0.1:2"])
        #expect(states(membership.observe(.beacon(node: b, address: "127.0.0.1:2", slots: 4), at: 0.5)).isEmpty, "no redial within the interval")
        #expect(states(membership.observe(.beacon(node: b, address: "127.0.0.1:2", slots: 4), at: 1.6)) == ["dial 127.0.0.1:2"])
    }

    @Test func ownBeaconsAreIgnored() {
        var membership = fresh()
        #expect(membership.observe(.beacon(node: me, address: "x", slots: 1), at: 0).isEmpty)
        #expect(membership.members.isEmpty)
    }

    @Test func aHandshakeMakesAMemberAlive() {
        var membership = fresh()
        _ = membership.observe(.beacon(node: b, address: "127.0.0.1:2", slots: 4), at: 0)
        #expect(states(membership.observe(.connected(node: b, address: "127.0.0.1:2", slots: 4), at: 0.1)) == ["b joining->alive"])
        #expect(membership.observe(.beacon(node: b, address: "127.0.0.1:2", slots: 4), at: 5).isEmpty, "connected: no dial")
    }

    @Test func silenceMakesAMemberSuspectThenDead() {
        var membership = fresh()
        _ = membership.observe(.connected(node: b, address: "127.0.0.1:2", slots: 4), at: 0)
        #expect(ticks(&membership, from: 0.1, through: 1.0).isEmpty)
        #expect(states(membership.observe(.tick, at: 1.1)) == ["b alive->suspect"])
        #expect(states(membership.observe(.heard(node: b), at: 1.15)) == ["b suspect->alive"])
        #expect(ticks(&membership, from: 1.2, through: 2.1) == [])
        #expect(ticks(&membership, from: 2.2, through: 2.2) == ["b alive->suspect"])
        #expect(ticks(&membership, from: 2.3, through: 3.2) == ["b suspect->dead", "disconnect b"])
    }

    @Test func aFrozenMembersOldTimestampNeverBringsItBack() {
        // ClusterNode feeds every connection's last-received time before each tick; a
        // frozen peer's stays where it froze.
        var membership = fresh()
        _ = membership.observe(.connected(node: b, address: "127.0.0.1:2", slots: 4), at: 0)
        let seen = ticks(&membership, from: 0.1, through: 3, heard: [(b, 0.05)])
        #expect(seen == ["b alive->suspect", "b suspect->dead", "disconnect b"], "no flapping back to alive")
        #expect(membership.members["b"]?.state == .dead)
    }

    @Test func onlyAMessageReceivedAfterTheSuspicionClearsIt() {
        var membership = fresh()
        _ = membership.observe(.connected(node: b, address: "127.0.0.1:2", slots: 4), at: 0)
        #expect(ticks(&membership, from: 0.1, through: 1.1) == ["b alive->suspect"])
        #expect(states(membership.observe(.heard(node: b), at: 1.05)).isEmpty, "received before the suspicion began")
        #expect(membership.members["b"]?.lastHeard == 1.05)
        #expect(states(membership.observe(.heard(node: b), at: 1.12)) == ["b suspect->alive"])
    }

    @Test func aPausedNodeBlamesNobodyForItsOwnSilence() {
        var membership = fresh()
        let c = NodeID(name: "c", incarnation: 3)
        _ = membership.observe(.connected(node: b, address: "127.0.0.1:2", slots: 4), at: 0)
        _ = membership.observe(.connected(node: c, address: "127.0.0.1:3", slots: 4), at: 0)
        #expect(ticks(&membership, from: 0.1, through: 0.5, heard: [(b, 0.5), (c, 0.5)]).isEmpty)
        // This node stops (SIGSTOP) for 4 s: its next tick comes 4 s after the last one.
        #expect(states(membership.observe(.tick, at: 4.5)) == ["late 4.0"], "nobody suspected or dead on the node's own silence")
        // b answers the fresh heartbeats at once; c really is gone, and is found out by
        // the timeouts counted from the wake-up.
        var seen: [String] = []
        for step in 1...30 {
            let time = 4.5 + Double(step) * 0.1
            seen += states(membership.observe(.heard(node: b), at: time - 0.05))
            seen += states(membership.observe(.tick, at: time))
        }
        #expect(seen == ["c alive->suspect", "c suspect->dead", "disconnect c"], "only the silent peer is blamed")
        #expect(membership.members["b"]?.state == .alive)
    }

    @Test func aDeadPeerIsStillFoundOutAfterAPause() {
        var membership = fresh()
        _ = membership.observe(.connected(node: b, address: "127.0.0.1:2", slots: 4), at: 0)
        _ = ticks(&membership, from: 0.1, through: 0.5, heard: [(b, 0.5)])
        #expect(states(membership.observe(.tick, at: 10)) == ["late 9.5"])
        var seen: [(Double, String)] = []
        for step in 1...30 {
            let time = 10 + Double(step) * 0.1
            seen += states(membership.observe(.tick, at: time)).map { (time, $0) }
        }
        #expect(seen.map(\.1) == ["b alive->suspect", "b suspect->dead", "disconnect b"])
        #expect(seen.first.map { $0.0 > 11 } == true, "suspect only once the suspect timeout passed after the wake-up: \(seen)")
        #expect(seen.last.map { $0.0 > 12 } == true, "dead only once the dead timeout passed after the wake-up: \(seen)")
    }

    @Test func aDroppedConnectionIsDeathAndALeaveIsLeaving() {
        var membership = fresh()
        let c = NodeID(name: "c", incarnation: 3)
        _ = membership.observe(.connected(node: b, address: "127.0.0.1:2", slots: 4), at: 0)
        _ = membership.observe(.connected(node: c, address: "127.0.0.1:3", slots: 4), at: 0)
        #expect(states(membership.observe(.disconnected(node: b), at: 0.1)) == ["b alive->dead"])
        #expect(states(membership.observe(.left(node: c), at: 0.1)) == ["c alive->left"])
        #expect(states(membership.observe(.disconnected(node: c), at: 0.2)).isEmpty, "a leaving member's drop is expected")
    }

    @Test func aRestartedNodeReplacesItsOldEntry() {
        var membership = fresh()
        _ = membership.observe(.connected(node: b, address: "127.0.0.1:2", slots: 4), at: 0)
        _ = membership.observe(.disconnected(node: b), at: 1)
        let reborn = NodeID(name: "b", incarnation: 11)
        #expect(states(membership.observe(.beacon(node: reborn, address: "127.0.0.1:5", slots: 4), at: 2))
                == ["removed b#10", "joined b joining", "dial 127.0.0.1:5"])
        #expect(states(membership.observe(.connected(node: reborn, address: "127.0.0.1:5", slots: 4), at: 2.1)) == ["b joining->alive"])
        #expect(membership.members["b"]?.node == reborn)
    }

    @Test func anOlderIncarnationIsIgnored() {
        var membership = fresh()
        _ = membership.observe(.connected(node: b, address: "127.0.0.1:2", slots: 4), at: 0)
        #expect(membership.observe(.beacon(node: NodeID(name: "b", incarnation: 9), address: "x", slots: 1), at: 1).isEmpty)
        #expect(membership.members["b"]?.node == b)
    }

    @Test func aBeaconOfAnotherIncarnationNeverEvictsALiveMember() {
        var membership = fresh()
        _ = membership.observe(.connected(node: b, address: "127.0.0.1:2", slots: 4), at: 0)
        let impostor = NodeID(name: "b", incarnation: 99)
        #expect(membership.observe(.beacon(node: impostor, address: "127.0.0.1:7", slots: 4), at: 0.1).isEmpty)
        #expect(membership.members["b"]?.node == b && membership.members["b"]?.state == .alive)
        _ = ticks(&membership, from: 0.1, through: 1.1)
        #expect(membership.members["b"]?.state == .suspect)
        #expect(membership.observe(.beacon(node: impostor, address: "127.0.0.1:7", slots: 4), at: 1.2).isEmpty, "a suspect still holds its name")
        #expect(membership.members["b"]?.node == b)
    }

    @Test func afterAMemberDiesOrLeavesAnyIncarnationIsAdmittedAtOnce() {
        var membership = fresh()
        let c = NodeID(name: "c", incarnation: 30)
        _ = membership.observe(.connected(node: b, address: "127.0.0.1:2", slots: 4), at: 0)
        _ = membership.observe(.connected(node: c, address: "127.0.0.1:3", slots: 4), at: 0)
        _ = membership.observe(.disconnected(node: b), at: 1)
        _ = membership.observe(.left(node: c), at: 1)
        // Older incarnations too (a machine whose clock is behind): no waiting for the
        // dead entry to be forgotten.
        let olderB = NodeID(name: "b", incarnation: 5)
        #expect(states(membership.observe(.beacon(node: olderB, address: "127.0.0.1:4", slots: 2), at: 1.1))
                == ["removed b#10", "joined b joining", "dial 127.0.0.1:4"])
        let olderC = NodeID(name: "c", incarnation: 6)
        #expect(states(membership.observe(.connected(node: olderC, address: "127.0.0.1:5", slots: 2), at: 1.2))
                == ["removed c#30", "joined c alive"])
        #expect(membership.members["b"]?.node == olderB && membership.members["c"]?.node == olderC)
    }

    @Test func aHandshakeOfANewerIncarnationReplacesAMemberThatStoppedAnswering() {
        // ClusterSystem completes such a handshake only when the old one is not answering.
        var membership = fresh()
        _ = membership.observe(.connected(node: b, address: "127.0.0.1:2", slots: 4), at: 0)
        let reborn = NodeID(name: "b", incarnation: 11)
        #expect(states(membership.observe(.connected(node: reborn, address: "127.0.0.1:6", slots: 4), at: 0.5))
                == ["removed b#10", "joined b alive"])
        #expect(membership.observe(.connected(node: b, address: "127.0.0.1:2", slots: 4), at: 0.6).isEmpty, "the older one is stale")
    }

    @Test func aBeaconWithThisNodesNameIsDialledToSettleWhoKeepsIt() {
        var membership = fresh()
        #expect(states(membership.observe(.beacon(node: NodeID(name: "a", incarnation: 2), address: "127.0.0.1:8", slots: 1), at: 0)) == ["dial 127.0.0.1:8"])
        #expect(membership.observe(.beacon(node: NodeID(name: "a", incarnation: 2), address: "127.0.0.1:8", slots: 1), at: 0.5).isEmpty)
        #expect(membership.members.isEmpty)
    }

    @Test func deadMembersAreForgottenAfterAWhile() {
        // A node that ticks rarely (late ticks change nothing about forgetting).
        var membership = Membership(local: me, suspectTimeout: 1, deadTimeout: 2, redialInterval: 1, forgetAfter: 60, lateTickAfter: 100)
        _ = membership.observe(.connected(node: b, address: "127.0.0.1:2", slots: 4), at: 0)
        _ = membership.observe(.disconnected(node: b), at: 1)
        #expect(membership.observe(.tick, at: 30).isEmpty)
        #expect(states(membership.observe(.tick, at: 61)) == ["removed b#10"])
        #expect(membership.members.isEmpty)
    }

    @Test func seedsAreDialledUntilConnected() {
        var membership = fresh()
        #expect(states(membership.observe(.seed(address: "127.0.0.1:9"), at: 0)) == ["dial 127.0.0.1:9"])
        #expect(membership.observe(.seed(address: "127.0.0.1:9"), at: 0.5).isEmpty)
        _ = membership.observe(.connected(node: b, address: "127.0.0.1:9", slots: 4), at: 0.6)
        #expect(membership.observe(.seed(address: "127.0.0.1:9"), at: 5).isEmpty)
    }
}
