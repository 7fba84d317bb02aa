import Testing
@testable import SpokesCluster

/// The prober's rules, without sockets: silent members are probed directly and through
/// others, only answers to our own outstanding probes are news, relays go to the
/// addresses the relaying node knows.
@Suite struct ProberTests {
    let a = NodeID(name: "a", incarnation: 1)
    let b = NodeID(name: "b", incarnation: 1)
    let c = NodeID(name: "c", incarnation: 1)
    let d = NodeID(name: "d", incarnation: 1)

    func prober(_ local: NodeID, seed: UInt64 = 7) -> Prober {
        Prober(local: local, probeAfter: 0.3, probeInterval: 0.2, helpers: 2, answerWithin: 2, seed: seed)
    }

    func peer(_ node: NodeID, heard: Double) -> Prober.Peer {
        Prober.Peer(node: node, address: "\(node.name):7000", lastHeard: heard)
    }

    /// The nonce of the ping in `actions` and where it went.
    func ping(in actions: [Prober.Action]) -> (nonce: UInt64, to: String)? {
        for case .send(.ping(let nonce, _), let to) in actions { return (nonce, to) }
        return nil
    }

    /// A probe request is taken only about the members of the last tick, at the address
    /// given then: a member that restarted (another incarnation, another address) between
    /// two requests is probed as it is now, and its old incarnation no more.
    @Test func aProbeRequestIsTakenOnlyAboutTheMembersOfTheLastTick() {
        var prober = prober(a)
        #expect(prober.tick(peers: [peer(b, heard: 9.9), peer(c, heard: 9.9)], at: 10).isEmpty)
        let first = prober.receive(.pingRequest(nonce: 1, from: c, target: b), from: "c:7000", at: 10)
        #expect(ping(in: first)?.to == "b:7000")
        let restarted = NodeID(name: "b", incarnation: 2)
        let moved = Prober.Peer(node: restarted, address: "b:7001", lastHeard: 10.1)
        #expect(prober.tick(peers: [moved, peer(c, heard: 10.1)], at: 10.2).isEmpty)
        #expect(prober.receive(.pingRequest(nonce: 2, from: c, target: b), from: "c:7000", at: 10.2).isEmpty)
        #expect(ping(in: prober.receive(.pingRequest(nonce: 3, from: c, target: restarted), from: "c:7000", at: 10.2))?.to == "b:7001")
    }

    @Test func aMemberHeardWithinProbeAfterIsNeverProbed() {
        var prober = prober(a)
        #expect(prober.tick(peers: [peer(b, heard: 9.8), peer(c, heard: 9.9)], at: 10).isEmpty)
    }

    @Test func aSilentMemberIsPingedAskedAboutThroughTwoOthersAndProbedAgainEveryInterval() {
        var prober = prober(a)
        let peers = [peer(b, heard: 9.0), peer(c, heard: 9.9), peer(d, heard: 9.95)]
        let actions = prober.tick(peers: peers, at: 10)
        let first = try! #require(ping(in: actions))
        #expect(first.to == "b:7000")
        let requests = actions.compactMap { action -> String? in
            guard case .send(.pingRequest(let nonce, let from, let target), let to) = action, nonce == first.nonce, from == a, target == b else { return nil }
            return to
        }
        #expect(Set(requests) == ["c:7000", "d:7000"], "\(actions)")
        #expect(prober.tick(peers: peers, at: 10.1).isEmpty, "not again before the probe interval")
        let again = ping(in: prober.tick(peers: peers, at: 10.25))
        #expect(again?.to == "b:7000" && again?.nonce != first.nonce, "a fresh nonce each round")
    }

    @Test func onlyAnAckToAnOutstandingProbeAboutItsTargetIsNewsAndOnlyOnce() {
        var prober = prober(a)
        let sent = try! #require(ping(in: prober.tick(peers: [peer(b, heard: 0), peer(c, heard: 9.9)], at: 10)))
        #expect(prober.receive(.ack(nonce: sent.nonce &+ 1, from: b, about: b), from: "b:7000", at: 10.01).isEmpty, "unknown nonce")
        #expect(prober.receive(.ack(nonce: sent.nonce, from: c, about: c), from: "c:7000", at: 10.01).isEmpty, "about another node")
        #expect(prober.receive(.ack(nonce: sent.nonce, from: b, about: NodeID(name: "b", incarnation: 2)), from: "b:7000", at: 10.01).isEmpty,
                "another incarnation")
        #expect(prober.receive(.ack(nonce: sent.nonce, from: b, about: b), from: "b:7000", at: 10.02) == [.answered(b)])
        #expect(prober.receive(.ack(nonce: sent.nonce, from: b, about: b), from: "b:7000", at: 10.03).isEmpty, "a replay")
        var late = prober
        let next = try! #require(ping(in: late.tick(peers: [peer(b, heard: 0)], at: 11)))
        #expect(late.receive(.ack(nonce: next.nonce, from: b, about: b), from: "b:7000", at: 13.5).isEmpty, "after answerWithin")
    }

    @Test func aPingRequestIsRelayedToTheAddressThisNodeKnowsAndTheAnswerPassedBack() {
        var requester = prober(a, seed: 1)
        var helper = prober(c, seed: 2)
        var target = prober(b, seed: 3)
        let actions = requester.tick(peers: [peer(b, heard: 0), peer(c, heard: 9.9)], at: 10)
        let request = try! #require(actions.compactMap { action -> Prober.Message? in
            if case .send(let message, "c:7000") = action, case .pingRequest = message { return message }
            return nil
        }.first)
        _ = helper.tick(peers: [peer(a, heard: 9.9), Prober.Peer(node: b, address: "127.0.0.2:7000", lastHeard: 9.9)], at: 10)
        let relayed = helper.receive(request, from: "a:7000", at: 10.01)
        let relay = try! #require(ping(in: relayed))
        #expect(relay.to == "127.0.0.2:7000", "the address the helper knows, not one a datagram names")
        let answer = target.receive(.ping(nonce: relay.nonce, from: c), from: "c:7000", at: 10.02)
        #expect(answer == [.send(.ack(nonce: relay.nonce, from: b, about: b), to: "c:7000")])
        let passed = helper.receive(.ack(nonce: relay.nonce, from: b, about: b), from: "127.0.0.2:7000", at: 10.03)
        guard case .send(let back, "a:7000")? = passed.first else {
            Issue.record("the helper did not pass the answer back: \(passed)")
            return
        }
        #expect(requester.receive(back, from: "c:7000", at: 10.04) == [.answered(b)], "the indirect answer is news of b")
    }

    @Test func aPingRequestFromOrAboutAStrangerIsDropped() {
        var helper = prober(c)
        _ = helper.tick(peers: [peer(a, heard: 9.9), peer(b, heard: 9.9)], at: 10)
        let stranger = NodeID(name: "x", incarnation: 1)
        #expect(helper.receive(.pingRequest(nonce: 1, from: stranger, target: b), from: "x:7000", at: 10).isEmpty)
        #expect(helper.receive(.pingRequest(nonce: 1, from: a, target: stranger), from: "a:7000", at: 10).isEmpty)
        #expect(helper.receive(.pingRequest(nonce: 1, from: NodeID(name: "a", incarnation: 9), target: b), from: "a:7000", at: 10).isEmpty)
    }

    @Test func aPingIsAnsweredToWhereItCameFromButIsNoNews() {
        var prober = prober(b)
        #expect(prober.receive(.ping(nonce: 42, from: a), from: "127.0.0.1:5000", at: 1) == [.send(.ack(nonce: 42, from: b, about: b), to: "127.0.0.1:5000")])
        #expect(prober.receive(.ping(nonce: 42, from: b), from: "127.0.0.1:5000", at: 1).isEmpty, "its own name: a reflection")
    }

    @Test func outstandingProbesAreBoundedWhateverPeersAsk() {
        var helper = prober(c)
        _ = helper.tick(peers: [peer(a, heard: 9.9), peer(b, heard: 9.9)], at: 10)
        var relayed = 0
        for nonce in 0..<UInt64(Prober.maximumOutstanding + 500) {
            relayed += helper.receive(.pingRequest(nonce: nonce, from: a, target: b), from: "a:7000", at: 10).count
        }
        #expect(relayed == Prober.maximumOutstanding && helper.outstandingCount == Prober.maximumOutstanding)
        _ = helper.tick(peers: [peer(a, heard: 13), peer(b, heard: 13)], at: 13)
        #expect(helper.outstandingCount == 0, "forgotten after answerWithin")
    }

    /// Issue 21 §3, the case that used to kill: `b`'s link is cut for 0.8 s. Its TCP
    /// heartbeats then come back only with TCP's next retransmission (0.2 + 0.4 + 0.8 s
    /// after the cut), past dead_after; probes over UDP get through as soon as the link
    /// is back. `a` ticks every 0.2 s as a node does.
    func shortCut(probing: Bool, crash: Bool = false) -> [Member.State] {
        var membership = Membership(local: a, suspectTimeout: 0.6, deadTimeout: 1.2)
        var observer = self.prober(a)
        var target = self.prober(b, seed: 9)
        var verdicts: [Member.State] = []
        func observe(_ observation: Membership.Observation, at now: Double) {
            for case .publish(.changed(let member, _)) in membership.observe(observation, at: now) { verdicts.append(member.state) }
        }
        observe(.connected(node: b, address: "b:7000", slots: 1), at: 0)
        let cut = 10.0..<10.8
        let tcpBack = 10.0 + 0.2 + 0.4 + 0.8
        var now = 0.2
        while now < 14 {
            let up = !cut.contains(now) && !(crash && now >= cut.lowerBound)
            if up, now < cut.lowerBound || now >= tcpBack { observe(.heard(node: b), at: now) }
            observe(.tick, at: now)
            if probing {
                let peers = membership.sortedMembers.filter { $0.state == .alive || $0.state == .suspect }.map {
                    Prober.Peer(node: $0.node, address: $0.address, lastHeard: $0.lastHeard)
                }
                for case .send(.ping(let nonce, let from), _) in observer.tick(peers: peers, at: now) where up {
                    for case .send(let ack, _) in target.receive(.ping(nonce: nonce, from: from), from: "a:7000", at: now) {
                        for case .answered(let node) in observer.receive(ack, from: "b:7000", at: now + 0.001) {
                            observe(.heard(node: node), at: now + 0.001)
                        }
                    }
                }
            }
            now += 0.2
        }
        return verdicts
    }

    @Test func aCutShorterThanDeadAfterKillsNobodyWhenProbesGetThroughAndDidBefore() {
        #expect(!shortCut(probing: true).contains(.dead), "\(shortCut(probing: true))")
        #expect(shortCut(probing: false).contains(.dead), "without probes TCP's back-off outlasts dead_after")
        #expect(shortCut(probing: true, crash: true).contains(.dead), "a crash is still a death")
    }
}
