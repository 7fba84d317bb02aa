@testable import SpokesCluster
import Testing
@testable import SpokesCLI

/// `spokes status` during a rolling upgrade: the version every alive member speaks, and
/// the members that hold the cluster at an older one (pure: the report, not the call).
@Suite struct StatusProtocolLineTests {
    func member(_ name: String, _ versions: ProtocolVersions?, state: Member.State = .alive) -> MemberStatus {
        MemberStatus(name: name, address: "127.0.0.1:1", state: state.rawValue, incarnation: "1", slots: 1, waitingSlots: 0,
                     protocolVersions: versions)
    }

    func report(_ members: [MemberStatus]) -> StatusCommand.Report {
        StatusCommand.Report(members: members, total: StatusCommand.Total(members), unanswered: [:], rejected: [:])
    }

    @Test func aWholeClusterOfThisBuildUsesItsHighestProtocolAndSaysNothingMore() {
        let whole = report([member("n1", .current), member("n2", .current), member("n3", .current)])
        #expect(whole.protocolVersion == ProtocolVersions.current.highest)
        #expect(whole.protocolLine == nil)
    }

    @Test func membersNotYetUpgradedAreNamedAndHoldTheClusterAtThree() {
        // n3 answered through a node of the previous release, which reports no range: 3.
        let rolling = report([member("n1", .current), member("n2", .only(3)), member("n3", nil), member("n4", .only(3), state: .left)])
        #expect(rolling.protocolVersion == 3)
        #expect(rolling.protocolLine == "protocol: 3 until n2, n3 speak 7 (a rolling upgrade under way?)")
        let last = report([member("n1", .current), member("n2", nil)])
        #expect(last.protocolLine == "protocol: 3 until n2 speaks 7 (a rolling upgrade under way?)")
    }

    @Test func aClusterOfThePreviousReleaseAloneSaysNothing() {
        let old = report([member("n1", nil), member("n2", nil)])
        #expect(old.protocolVersion == 3)
        #expect(old.protocolLine == nil)
    }
}
