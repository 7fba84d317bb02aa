import Synchronization
import Testing
@testable import SpokesConcurrency

/// What woke, and the clock's time when it ran.
private actor Woken {
    var names: [String] = []
    var times: [String: Double] = [:]
    func add(_ name: String, at time: Double) {
        names.append(name)
        times[name] = time
    }
}

/// The runtime's virtual clock: time moves only when told, and sleepers wake in order.
@Suite struct VirtualClockTests {
    /// Waits (yielding, never sleeping) until `count` tasks sleep on `clock`.
    static func sleepers(_ count: Int, on clock: VirtualClock) async {
        for _ in 0..<100_000 where clock.sleepers < count { await Task.yield() }
    }

    @Test func aGroupBroughtForwardWakesItsDueSleepersAloneAndTheClockStays() async throws {
        let clock = VirtualClock()
        let woken = Woken()
        let mine = [1.0, 5.0].map { seconds in Task { try await clock.sleep(for: seconds, group: 7); await woken.add("mine \(seconds)", at: clock.now) } }
        let other = Task { try await clock.sleep(for: 1); await woken.add("other", at: clock.now) }
        await Self.sleepers(3, on: clock)
        #expect(clock.bringForward(group: 7, by: 2) == 1, "the group's sleeper due within 2 s wakes")
        try await mine[0].value
        #expect(clock.now == 0 && clock.sleepers == 2, "the clock and the others stay")
        #expect(clock.advance(by: 1) == 1)
        try await other.value
        #expect(clock.advance(by: 2) == 1, "the group's later sleeper is due 2 s early: at 3, not 5")
        try await mine[1].value
        #expect(await woken.names == ["mine 1.0", "other", "mine 5.0"])
        #expect(await woken.times["mine 5.0"] == 3)
    }

    @Test func aDeadlineRunsWhereTheClockMovesInDeadlineOrderAndATakenBackOneNever() async throws {
        let clock = VirtualClock(now: 1)
        let ran = Mutex<[String]>([])
        clock.schedule(after: 2) { ran.withLock { $0.append("2 s at \(clock.now)") } }
        let timer = clock.startTimer(after: 1) { ran.withLock { $0.append("taken back") } }
        clock.schedule(after: 1) { ran.withLock { $0.append("1 s at \(clock.now)") } }
        clock.schedule(after: -.infinity) { ran.withLock { $0.append("none") } }
        clock.schedule(after: .nan) { ran.withLock { $0.append("nan") } }
        #expect(clock.sleepers == 5, "no task waits: each deadline is counted on the clock")
        #expect(ran.withLock { $0 }.isEmpty, "nothing runs before the clock moves")
        timer.cancel()
        #expect(clock.advance(by: 0) == 2, "a wait of none (or NaN) is due when the clock next moves")
        #expect(ran.withLock { $0 } == ["none", "nan"])
        #expect(clock.advance(by: 5) == 2, "the taken back one is gone")
        #expect(ran.withLock { $0 } == ["none", "nan", "1 s at 6.0", "2 s at 6.0"], "in deadline order, in the advance itself")
        #expect(clock.sleepers == 0 && clock.nextDeadline == nil)
        timer.cancel()
    }

    @Test func aSleeperWakesOnlyOnceTheClockReachesItsDeadline() async throws {
        let clock = VirtualClock(now: 10)
        let woke = Mutex<Double?>(nil)
        let sleeper = Task {
            try await clock.sleep(for: 2)
            woke.withLock { $0 = clock.now }
        }
        await Self.sleepers(1, on: clock)
        #expect(clock.advance(by: 1.5) == 0)
        #expect(clock.sleepers == 1)
        #expect(clock.advance(by: 0.5) == 1)
        try await sleeper.value
        #expect(woke.withLock { $0 } == 12)
    }

    @Test func sleepersDueTogetherWakeEarliestFirstThenInTheOrderTheySlept() async throws {
        let clock = VirtualClock()
        let woken = Woken()
        var tasks: [Task<Void, any Error>] = []
        for (name, seconds) in [("late", 3.0), ("first", 1.0), ("second", 1.0)] {
            tasks.append(Task { @Sendable in
                try await clock.sleep(for: seconds)
                await woken.add(name, at: clock.now)
            })
            await Self.sleepers(tasks.count, on: clock)
        }
        #expect(clock.nextDeadline == 1)
        #expect(clock.advance(by: 1) == 2, "the two due at 1 s, not the one due at 3 s")
        #expect(clock.advance(by: 4) == 1)
        for task in tasks { try await task.value }
        let names = await woken.names
        #expect(Set(names) == ["late", "first", "second"])
        #expect(await woken.times["late"] == 5)
    }

    @Test func manySleepersSomeCancelledWakeExactlyWhenDueAndTheNextDeadlineSkipsTheCancelled() async throws {
        let clock = VirtualClock()
        // Deadlines spread over 1 to 23 s, with ties.
        let seconds = (0..<200).map { Double(($0 * 37) % 23) + 1 }
        let tasks = seconds.map { seconds in Task { try await clock.sleep(for: seconds) } }
        await Self.sleepers(seconds.count, on: clock)
        // All but every tenth cancelled: most of what the clock queued is stale now.
        for (index, task) in tasks.enumerated() where !index.isMultiple(of: 10) { task.cancel() }
        #expect(clock.sleepers == 20)
        // Sleepers added after the cancellations (the clock may make its queue again then).
        let later = [2.5, 7.5, 30].map { seconds in Task { try await clock.sleep(for: seconds) } }
        await Self.sleepers(23, on: clock)
        var remaining = (seconds.enumerated().filter { $0.offset.isMultiple(of: 10) }.map(\.element) + [2.5, 7.5, 30]).sorted()
        while let next = clock.nextDeadline {
            #expect(next == remaining.first)
            let due = remaining.prefix { $0 == next }.count
            #expect(clock.advance(by: next - clock.now) == due, "at \(next) s")
            remaining.removeFirst(due)
        }
        #expect(remaining.isEmpty && clock.sleepers == 0)
        for (index, task) in tasks.enumerated() where index.isMultiple(of: 10) { try await task.value }
        for task in later { try await task.value }
    }

    @Test func aCancelledSleeperThrowsAtOnceAndLeavesTheClock() async {
        let clock = VirtualClock()
        let sleeper = Task { try await clock.sleep(for: 60) }
        await Self.sleepers(1, on: clock)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleepers == 0)
        #expect(clock.now == 0, "nothing moved the clock")
    }

    @Test func aSleepOfNothingReturnsWithoutTheClock() async throws {
        let clock = VirtualClock(now: 3)
        try await clock.sleep(for: 0)
        try await clock.sleep(for: -1)
        #expect(clock.now == 3 && clock.sleepers == 0)
    }

    @Test func theRealClockNeverGoesBack() {
        let clock = RealClock()
        var last = clock.now
        for _ in 0..<1000 {
            let now = clock.now
            #expect(now >= last)
            last = now
        }
    }
}
