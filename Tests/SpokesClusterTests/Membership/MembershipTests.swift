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
            }
        }
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
        #expect(membership.observe(.tick, at: 0.9).isEmpty)
        #expect(states(membership.observe(.tick, at: 1.1)) == ["b alive->suspect"])
        #expect(states(membership.observe(.heard(node: b), at: 1.2)) == ["b suspect->alive"])
        #expect(states(membership.observe(.tick, at: 2.5)) == ["b alive->suspect"])
        #expect(states(membership.observe(.tick, at: 3.3)) == ["b suspect->dead", "disconnect b"])
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

    @Test func deadMembersAreForgottenAfterAWhile() {
        var membership = fresh()
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
