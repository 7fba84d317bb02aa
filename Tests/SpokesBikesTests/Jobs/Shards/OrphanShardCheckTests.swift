import Testing
@testable import SpokesBikes

/// When a station shard group has outlived its job (``OrphanShardCheck``).
@Suite struct OrphanShardCheckTests {
    @Test func aJobIsLookedUpAtMostOnceAPeriod() {
        var check = OrphanShardCheck(askEvery: 30, patience: 300)
        let asks = [("j1", 0.0), ("j1", 29.9), ("j2", 29.9), ("j1", 30)].map { check.shouldAsk(about: $0.0, at: $0.1) }
        #expect(asks == [true, false, true, true], "j1 not again within 30 s; each job on its own")
    }

    @Test func anEndedJobsGroupIsAnOrphanAtOnceAndARunningOnesNever() {
        var check = OrphanShardCheck(askEvery: 30, patience: 300)
        let ended = check.found(.ended, for: "j1", at: 0)
        #expect(ended)
        let running = stride(from: 0.0, through: 10_000, by: 500).map { check.found(.running, for: "j2", at: $0) }
        #expect(!running.contains(true))
    }

    @Test func aJobNoNodeKnowsIsAnOrphansOnlyAfterThePatience() {
        var check = OrphanShardCheck(askEvery: 30, patience: 300)
        let answers: [(OrphanShardCheck.Fate, Double)] = [
            (.unknown, 100), (.unknown, 399),  // unknown for 299 s
            (.running, 400),                   // found again (a partition healed)
            (.unknown, 500), (.unknown, 799),  // the patience starts over
            (.unknown, 800),                   // unknown for 300 s
        ]
        let orphaned = answers.map { check.found($0.0, for: "j1", at: $0.1) }
        #expect(orphaned == [false, false, false, false, false, true])
        check.forget("j1")
        let again = check.found(.unknown, for: "j1", at: 900)
        #expect(!again, "forgotten: a new group of the same name starts over")
    }

    @Test func jobsNotAskedAboutForLongAreForgotten() {
        var check = OrphanShardCheck(askEvery: 30, patience: 300)
        _ = check.shouldAsk(about: "gone", at: 0)
        _ = check.found(.unknown, for: "gone", at: 0)
        _ = check.shouldAsk(about: "other", at: 600)
        let orphaned = check.found(.unknown, for: "gone", at: 601)
        #expect(!orphaned, "its unknown-since was forgotten with it: the patience starts over")
    }

    @Test func aShardGroupNamesItsJob() {
        #expect(BikeShards.job(ofGroup: "bikeshard-job-0c865dfc-2") == "job-0c865dfc")
        #expect(BikeShards.job(ofGroup: "bikejob-job-0c865dfc") == nil)
        #expect(BikeShards.job(ofGroup: "bikeshard--1") == nil)
    }
}
