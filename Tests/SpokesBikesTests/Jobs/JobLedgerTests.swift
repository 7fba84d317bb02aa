import Testing
@testable import SpokesBikes

@Suite struct JobLedgerTests {
    func take(_ ledger: JobLedger, _ station: inout Station, user: Int = 0, attempt: Int, step: Int) throws(JobLedger.Refusal) -> Bool {
        var copy = station
        let result = try ledger.perform(Move(user: user, attempt: attempt, step: step), station: "s", goal: nil) { copy.takeBike() }
        station = copy
        return result
    }

    @Test func aRepeatedStepReturnsItsRecordedOutcomeWithoutActingAgain() throws {
        let ledger = JobLedger(users: 1)
        var station = Station(id: "s", name: "S", freeBikes: 1, emptySlots: 0)
        _ = ledger.beginAttempt(user: 0, attempt: 1)
        #expect(try take(ledger, &station, attempt: 1, step: 1))
        #expect(try take(ledger, &station, attempt: 1, step: 1), "the same answer again")
        #expect(station.freeBikes == 0, "but the bike was taken once")
        #expect(ledger.progress(user: 0).moves == 1)
    }

    @Test func afterCloseNoMoveChangesAStation() throws {
        let ledger = JobLedger(users: 1)
        var station = Station(id: "s", name: "S", freeBikes: 2, emptySlots: 0)
        _ = ledger.beginAttempt(user: 0, attempt: 1)
        #expect(try take(ledger, &station, attempt: 1, step: 1))
        ledger.close()
        #expect(throws: JobLedger.Refusal.jobEnded(user: 0)) { try take(ledger, &station, attempt: 1, step: 2) }
        #expect(station.freeBikes == 1, "the late move took no bike")
        #expect(ledger.progress(user: 0).moves == 1)
    }

    @Test func stepsOutOfOrderAreRefused() {
        let ledger = JobLedger(users: 1)
        var station = Station(id: "s", name: "S", freeBikes: 1, emptySlots: 0)
        _ = ledger.beginAttempt(user: 0, attempt: 1)
        #expect(throws: JobLedger.Refusal.outOfOrder(user: 0, step: 3, expected: 1)) { try take(ledger, &station, attempt: 1, step: 3) }
        #expect(station.freeBikes == 1)
    }

    @Test func aNewAttemptFencesOffTheOldOneAndResumesWhereItStopped() throws {
        let ledger = JobLedger(users: 1)
        var station = Station(id: "s", name: "S", freeBikes: 3, emptySlots: 0)
        _ = ledger.beginAttempt(user: 0, attempt: 1)
        #expect(try take(ledger, &station, attempt: 1, step: 1))
        let resume = ledger.beginAttempt(user: 0, attempt: 2)
        #expect(resume.moves == 1 && resume.hasBike, "resumes after step 1, riding")
        #expect(throws: JobLedger.Refusal.staleAttempt(user: 0, attempt: 1, current: 2)) { try take(ledger, &station, attempt: 1, step: 2) }
        #expect(station.freeBikes == 2, "the fenced move changed nothing")
    }

    @Test func aResultCountsOnceAndOnlyFromTheCurrentAttempt() {
        let ledger = JobLedger(users: 2)
        _ = ledger.beginAttempt(user: 0, attempt: 1)
        _ = ledger.beginAttempt(user: 0, attempt: 2)
        #expect(ledger.accept(user: 0, attempt: 1) == nil, "a fenced attempt's result")
        #expect(ledger.accept(user: 0, attempt: 2) != nil)
        #expect(ledger.accept(user: 0, attempt: 2) == nil, "counted once")
        #expect(ledger.accept(user: 5, attempt: 1) == nil, "no such user")
    }
}
