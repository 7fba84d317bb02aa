import Testing
@testable import SpokesCluster

/// The renaming rule on its own (pure): a call received under an old name takes the new
/// one (and its new actor, when it was called on the old one); a call sent to a peer
/// below the version goes under the old name; every other call is left alone.
@Suite struct CallTargetRenamesTests {
    let table = CallTargetRenames(since: 5, renames: [
        .init(oldTarget: "$sOldA", oldRecipient: "jobs", newTarget: "$sNewA", newRecipient: "bikejobs"),
        .init(oldTarget: "$sOldB", oldRecipient: nil, newTarget: "$sNewB", newRecipient: nil),
    ])

    @Test func aCallReceivedUnderAnOldNameTakesTheNewNameAndActor() {
        #expect(table.received(target: "$sOldA", recipient: "jobs") == ("$sNewA", "bikejobs"))
        #expect(table.received(target: "$sOldA", recipient: "other") == ("$sNewA", "other"), "only the old actor moves")
        #expect(table.received(target: "$sOldB", recipient: "listener-7") == ("$sNewB", "listener-7"))
        #expect(table.received(target: "$sNewA", recipient: "bikejobs") == ("$sNewA", "bikejobs"), "new names stay")
        #expect(table.received(target: "$sOther", recipient: "jobs") == ("$sOther", "jobs"))
    }

    @Test func aCallSentToAnOlderPeerGoesUnderTheOldNameAndNoOtherDoes() {
        #expect(table.sent(target: "$sNewA", recipient: "bikejobs", version: 4) == ("$sOldA", "jobs"))
        #expect(table.sent(target: "$sNewB", recipient: "listener-7", version: 3) == ("$sOldB", "listener-7"))
        #expect(table.sent(target: "$sNewA", recipient: "bikejobs", version: 5) == ("$sNewA", "bikejobs"), "a peer of 5 knows the new name")
        #expect(table.sent(target: "$sOther", recipient: "jobs", version: 4) == ("$sOther", "jobs"))
    }

    @Test func thisBuildsTableRenamesEachFunctionOnceBothWays() {
        let renames = CallTargetRenames.current.renames
        #expect(renames.count == 20)
        #expect(Set(renames.map(\.oldTarget)).count == renames.count && Set(renames.map(\.newTarget)).count == renames.count)
        #expect(renames.allSatisfy { $0.oldTarget != $0.newTarget && $0.oldTarget.hasPrefix("$s") && $0.newTarget.hasPrefix("$s") })
        #expect(CallTargetRenames.current.since == 5 && ProtocolVersions.current.contains(5), "the renames came with protocol 5")
    }
}
