import SpokesTestKit
import Testing
@testable import SpokesCluster

@Suite struct FairShareTests {
    private func claim(_ job: String, owner: String = "ada", weight: Int = 5, demand: Int, max: Int? = nil) -> FairShare.Claim {
        FairShare.Claim(job: job, owner: owner, weight: weight, demand: demand, maxSlots: max)
    }

    @Test func twoEqualJobsShareEqually() {
        let shares = FairShare.shares(of: 8, among: [claim("a", demand: 100), claim("b", owner: "bob", demand: 100)])
        #expect(shares == ["a": 4, "b": 4])
    }

    @Test func aJobNeedingLessLeavesTheRestToOthers() {
        let shares = FairShare.shares(of: 8, among: [claim("long", demand: 2_000), claim("short", owner: "bob", demand: 1)])
        #expect(shares == ["long": 7, "short": 1])
    }

    @Test func weightsDivideAnOwnersPart() {
        let shares = FairShare.shares(of: 8, among: [claim("high", weight: 3, demand: 100), claim("low", weight: 1, demand: 100)])
        #expect(shares == ["high": 6, "low": 2])
    }

    @Test func ownersShareFirstWhateverTheirJobCount() {
        // One owner with three jobs, one with one: the owners' parts are equal.
        let shares = FairShare.shares(of: 12, among: [
            claim("a1", demand: 100), claim("a2", demand: 100), claim("a3", demand: 100), claim("b1", owner: "bob", demand: 100),
        ])
        #expect(shares == ["a1": 2, "a2": 2, "a3": 2, "b1": 6])
    }

    @Test func weightsDoNotCrossOwners() {
        // A high priority raises a job among its owner's jobs, not its owner's part.
        let shares = FairShare.shares(of: 10, among: [claim("a", weight: 10, demand: 100), claim("b", owner: "bob", weight: 1, demand: 100)])
        #expect(shares == ["a": 5, "b": 5])
    }

    @Test func aCapLimitsOneJobAndTheRestGoesToOthers() {
        let shares = FairShare.shares(of: 10, among: [claim("capped", demand: 100, max: 2), claim("free", owner: "bob", demand: 100)])
        #expect(shares == ["capped": 2, "free": 8])
    }

    @Test func anOwnerWhoseJobsNeedLessLeavesThemToOtherOwners() {
        let shares = FairShare.shares(of: 9, among: [
            claim("a1", demand: 1), claim("a2", demand: 1), claim("b1", owner: "bob", demand: 100), claim("c1", owner: "cy", demand: 100),
        ])
        #expect(shares == ["a1": 1, "a2": 1, "b1": 3.5, "c1": 3.5])
    }

    @Test func jobsWantingNothingGetNothingAndNothingIsOverGiven() {
        let shares = FairShare.shares(of: 4, among: [claim("idle", demand: 0), claim("busy", demand: 2), claim("neg", demand: -3)])
        #expect(shares == ["idle": 0, "busy": 2, "neg": 0])
        #expect(FairShare.shares(of: 0, among: [claim("a", demand: 5)]) == ["a": 0])
        #expect(FairShare.shares(of: 4, among: []).isEmpty)
    }

    @Test func sharesAlwaysAddUpToTheSlotsOrTheDemand() {
        var generator = TestGenerator(seed: 32)
        for _ in 0..<500 {
            let slots = Int.random(in: 0...40, using: &generator)
            let claims = (0..<Int.random(in: 1...8, using: &generator)).map { index in
                claim("j\(index)", owner: "o\(Int.random(in: 0...2, using: &generator))", weight: Int.random(in: 1...10, using: &generator),
                      demand: Int.random(in: 0...20, using: &generator), max: Bool.random(using: &generator) ? Int.random(in: 1...5, using: &generator) : nil)
            }
            let shares = FairShare.shares(of: slots, among: claims)
            let total = shares.values.reduce(0, +)
            let demand = claims.reduce(0) { $0 + $1.cappedDemand }
            #expect(abs(total - Double(min(slots, demand))) < 1e-6, "slots \(slots), claims \(claims)")
            for claim in claims { #expect(shares[claim.job]! <= Double(claim.cappedDemand) + 1e-9) }
        }
    }
}

