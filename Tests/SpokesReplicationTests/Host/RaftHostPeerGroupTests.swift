import SpokesTestKit
import SpokesConsensus
import Testing
@testable import SpokesReplication

/// What a peer may ask a node's Raft host to open: only kinds it has machines for, and
/// groups of a bounded size.
@Suite(.processLane, .timeLimit(.minutes(1)))
struct RaftHostPeerGroupTests {
    @Test func aPeersGroupOfAnUnknownKindOrTooManyReplicasIsRefusedAndAKnownOneOpensOnce() async throws {
        let cluster = try RaftTestCluster(nodes: 1)
        let host = cluster.host(0)
        let me = cluster.name(0)
        let big = try RaftGroup(replicas: [me] + (1...7).map { "x\($0)" })
        #expect(await host.openForPeer("taskjob-map-00000001", big)?.contains("at most 7") == true)
        let small = try RaftGroup(replicas: [me, "x1", "x2"])
        #expect(await host.openForPeer("other-1", small)?.contains("no state machine for groups of kind 'other'") == true)
        #expect(host.groupIDs.isEmpty, "nothing opened")
        await cluster.stopAll()
    }
}
