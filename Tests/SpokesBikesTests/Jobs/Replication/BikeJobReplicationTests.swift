import Foundation
import SpokesCluster
import SpokesJobs
import Testing
@testable import SpokesBikes

/// A replicated bike job's state: the ledger's events replayed on a replica, and the
/// machine a job's Raft group drives.
@Suite struct BikeJobReplicationTests {
    static let network = Network.synthetic(stations: 4, bikes: 3, emptySlots: 3)
    static let job = BikeJob(id: "job-replicated", network: network, options: SimulationOptions(users: 6, paths: 3, seed: 7))

    /// Drives `ledger` like a job's users would, seeded: attempts begun (some fencing
    /// off older ones), moves in and out of order, repeats, stale moves, results counted
    /// and users ended.
    func play(_ ledger: JobLedger, users: Int, stations: Int, steps: Int, seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var attempts = Array(repeating: 1, count: users)
        var next = Array(repeating: 1, count: users)
        for user in 0..<users { _ = ledger.beginAttempt(user: user, attempt: 1) }
        for _ in 0..<steps {
            let user = Int.random(in: 0..<users, using: &random)
            switch Int.random(in: 0..<20, using: &random) {
            case 0:
                attempts[user] += 1
                next[user] = ledger.beginAttempt(user: user, attempt: attempts[user]).moves + 1
            case 1:
                // A fenced-off attempt's late move.
                _ = try? ledger.move(Move(user: user, attempt: attempts[user] - 1, step: next[user]), station: 0, take: true)
            case 2:
                _ = ledger.accept(user: user, attempt: attempts[user], ending: .finishedPaths)
            case 3:
                ledger.end(user: user, BikeJobBook.UserEnd(ending: .failed, node: nil, attempts: attempts[user], reasons: ["gave up"]))
            default:
                let repeatLast = Int.random(in: 0..<5, using: &random) == 0 && next[user] > 1
                let step = repeatLast ? next[user] - 1 : next[user]
                let take = !ledger.progress(user: user).hasBike
                if (try? ledger.move(Move(user: user, attempt: attempts[user], step: step), station: Int.random(in: 0..<stations, using: &random), take: take)) != nil, !repeatLast {
                    next[user] += 1
                }
            }
        }
    }

    @Test(arguments: 1...20 as ClosedRange<UInt64>)
    func aReplicaThatAppliesTheLedgersEventsInOrderHoldsTheLedgersBook(seed: UInt64) {
        let start = Self.job.startingBook
        let ledger = JobLedger(book: start, recording: true)
        play(ledger, users: Self.job.options.users, stations: start.stations.count, steps: 400, seed: seed)
        var replica = start
        while true {
            let (events, _) = ledger.takeEvents(limit: 7)
            if events.isEmpty { break }
            for event in events {
                let applied = replica.apply(event)
                #expect(applied, "every recorded event applies on a replica: \(event)")
            }
            #expect(replica.bikesInPlay == start.bikesInPlay, "bikes are conserved after every batch")
        }
        #expect(replica == ledger.book, "seed \(seed): the replica's book is the coordinator's")
    }

    @Test func aLedgerThatDoesNotRecordHandsOnNothing() {
        let ledger = JobLedger(book: Self.job.startingBook, recording: false)
        play(ledger, users: 6, stations: 4, steps: 50, seed: 1)
        #expect(ledger.takeEvents(limit: 100).events.isEmpty)
    }

    @Test func theMachineHoldsTheJobAndEveryPrefixOfItsEventsConservesBikes() throws {
        let start = Self.job.startingBook
        let ledger = JobLedger(book: start, recording: true)
        play(ledger, users: 6, stations: 4, steps: 300, seed: 3)
        var machine = BikeJobMachine()
        #expect(machine.apply(BikeJobMachine.record([.attempt(user: 0, attempt: 1)], epoch: 0)).hasPrefix("error:"), "no events before the job")
        #expect(machine.apply(BikeJobMachine.start(Self.job, startedAt: 1_800_000_000.5)) == "ok")
        #expect(machine.book == start)
        #expect(machine.apply(BikeJobMachine.start(Self.job, startedAt: 1_900_000_000)) == "ok")
        #expect(machine.startedAt == 1_800_000_000.5, "the first start stays: a take-over reports the job's wall time from then")
        while true {
            let (events, _) = ledger.takeEvents(limit: 11)
            if events.isEmpty { break }
            #expect(machine.apply(BikeJobMachine.record(events, epoch: 0)) == "ok")
            #expect(machine.book?.bikesInPlay == start.bikesInPlay)
        }
        #expect(machine.book == ledger.book)
        #expect(machine.refusedEvents == 0)
        #expect(machine.apply(BikeJobMachine.cancel("cancelled with 'spokes cancel'")) == "ok")
        #expect(machine.apply(BikeJobMachine.cancel("another reason")) == "ok")
        #expect(machine.cancelReason == "cancelled with 'spokes cancel'", "the first reason stays")
        #expect(machine.apply(BikeJobMachine.finish) == "ok")
        var restored = BikeJobMachine()
        try restored.restore(machine.snapshot())
        #expect(restored.book == machine.book && restored.finished && restored.job?.id == Self.job.id && restored.startedAt == 1_800_000_000.5)
        #expect(machine.apply("{not json").hasPrefix("error:"))
    }

    @Test func aTakeOverFencesOffEveryChangeOfAnEarlierCoordinator() {
        var machine = BikeJobMachine()
        _ = machine.apply(BikeJobMachine.start(Self.job))
        #expect(machine.apply(BikeJobMachine.record([.attempt(user: 0, attempt: 1)], epoch: 0)) == "ok")
        #expect(machine.apply(BikeJobMachine.takeOver(epoch: 3)) == "ok")
        let before = machine.book
        let late = BikeJobMachine.record([.move(Move(user: 0, attempt: 1, step: 1), station: 0, take: true)], epoch: 0)
        #expect(machine.apply(late).hasPrefix("error:"), "the first coordinator's late batch")
        #expect(machine.book == before, "changed nothing")
        #expect(machine.apply(BikeJobMachine.takeOver(epoch: 2)).hasPrefix("error:"), "an epoch not above the current one")
        #expect(machine.apply(BikeJobMachine.record([.attempt(user: 0, attempt: 2)], epoch: 3)) == "ok")
        #expect(machine.book?.entries[0].attempt == 2)
        // A batch with an event the book refuses answers an error: that coordinator stops.
        let riding = BikeJobMachine.record([.move(Move(user: 0, attempt: 2, step: 1), station: 0, take: false)], epoch: 3)
        #expect(machine.apply(riding).hasPrefix("error:"), "a leave by a user on foot")
        #expect(machine.refusedEvents == 1)
        #expect(machine.book?.bikesInPlay == Self.job.startingBook.bikesInPlay)
    }

    /// Review (issue 29 §1.6): a batch with one event the book refuses applied the others,
    /// so replicas held a state no coordinator had; such a batch now changes nothing.
    @Test func aBatchWithARefusedEventChangesNothing() {
        var machine = BikeJobMachine()
        _ = machine.apply(BikeJobMachine.start(Self.job))
        let before = machine.book
        let batch = BikeJobMachine.record([
            .attempt(user: 0, attempt: 1),
            .move(Move(user: 0, attempt: 1, step: 1), station: 0, take: false),  // a leave by a user on foot
        ], epoch: 0)
        #expect(machine.apply(batch).hasPrefix("error:"))
        #expect(machine.book == before, "the good event of the batch is not applied either")
        #expect(machine.refusedEvents == 1)
    }

    /// Sharded stations were removed (issue 28 §3): a group a release 0.2 coordinator
    /// started for a sharded job (its first command names its shards) says so, and its
    /// book, which holds no station of the shards, is never run on (``BikeJobMachine/groupState(settings:)``
    /// ends such a job with its reason).
    @Test func aGroupOfAShardedJobFromAnEarlierReleaseSaysItWasSharded() throws {
        var machine = BikeJobMachine()
        #expect(machine.apply(BikeJobMachine.start(Self.job)) == "ok")
        #expect(!machine.wasSharded)
        var earlier = BikeJobMachine()
        var command = try #require(try JSONSerialization.jsonObject(with: Data(BikeJobMachine.start(Self.job).utf8)) as? [String: Any])
        command["shards"] = [["n1", "n2"], ["n2", "n3"]]
        let text = String(decoding: try JSONSerialization.data(withJSONObject: command), as: UTF8.self)
        #expect(earlier.apply(text) == "ok")
        #expect(earlier.wasSharded)
        var restored = BikeJobMachine()
        try restored.restore(earlier.snapshot())
        #expect(restored.wasSharded, "kept through a snapshot")
    }

    @Test func aResumedBookRunsOnlyTheUsersThatHadNotEnded() {
        var book = Self.job.startingBook
        _ = book.beginAttempt(user: 0, attempt: 1)
        _ = book.accept(user: 0, attempt: 1, ending: .finishedPaths)
        book.end(user: 1, BikeJobBook.UserEnd(ending: .failed, node: nil, attempts: 4, reasons: []))
        _ = book.beginAttempt(user: 2, attempt: 3)
        #expect(book.doneUsers == [0, 1])
        let fenced = book
        #expect(throws: BikeJobBook.Refusal.staleAttempt(user: 2, attempt: 2, current: 3)) {
            var copy = fenced
            _ = try copy.move(Move(user: 2, attempt: 2, step: 1), station: 0, take: true)
        }
        let report = Self.job.report(from: book, wallTime: 1, cancelReason: nil, finished: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(report.results.map(\.user) == Array(0..<6), "the report has every user, ended before or not")
        #expect(report.failedUsers?.map(\.user) == [1])
    }

    /// The format releases before protocol 7 keep a bike job in (``BikeJobMachine/format()``):
    /// the job desk's batch of events is the command those releases write, byte for byte,
    /// and the group reads back as the job, its epoch, its book and an end for every user
    /// that ended, so a take-over runs only the others.
    @Test func aBikejobGroupReadsBackAsTheJobItsBookAndItsEnds() throws {
        let format = BikeJobMachine.format()
        let settings = ClusterSettings()
        let spec = try Self.job.taskJobSpec(settings: settings)
        var machine = BikeJobMachine()
        #expect(format.keeps(spec) && format.kind == "bikejob")
        #expect(machine.apply(try format.start(spec)) == JobGroupFormat.applied)
        let ledger = JobLedger(book: Self.job.startingBook, recording: true)
        _ = ledger.beginAttempt(user: 0, attempt: 1)
        _ = ledger.accept(user: 0, attempt: 1, ending: .finishedPaths)
        ledger.end(user: 0, BikeJobBook.UserEnd(ending: .finishedPaths, node: "n1", attempts: 1, reasons: []))
        ledger.end(user: 1, BikeJobBook.UserEnd(ending: .failed, node: nil, attempts: 3, reasons: ["gave up"]))
        _ = ledger.beginAttempt(user: 2, attempt: 1)
        let (events, _) = ledger.takeEvents(limit: .max)
        let commands = format.batch(0, [BikeEventsCodec.encodeEvents(events)], [])
        #expect(commands == [BikeJobMachine.record(events, epoch: 0)], "the command releases before 7 write")
        for command in commands { #expect(machine.apply(command) == JobGroupFormat.applied) }
        #expect(format.batch(0, [], []).isEmpty, "ends alone: the book holds them")
        let takeOver = try #require(format.takeOver)
        let applied = machine.apply(takeOver(1))
        #expect(applied == JobGroupFormat.applied)

        let read = try #require(format.read(machine, settings))
        #expect(read.spec?.id == Self.job.id && read.spec?.inputs.count == Self.job.options.users && read.epoch == 1)
        let book = read.workloadState as? BikeJobBook
        #expect(book == ledger.book)
        #expect(Set(read.ends.keys) == [0, 1], "the users that ended")
        #expect(read.ends[0]?.output != nil && read.ends[0]?.node == "n1" && read.ends[1]?.output == nil)
        let other = format.read(JobMachine(), settings)
        #expect(other == nil, "another format's machine")
    }

    /// A user's result counts in one event and its end is recorded in a later one, so a
    /// batch may commit the first without the second. A take-over then must not run the
    /// user again (its moves would be refused, and its counted result reported failed):
    /// the job's group reads back with an end for every user the book says ended or
    /// counted, the committed ends first.
    @Test func aUserWhoseResultCountedRunsNoMoreAfterATakeOver() throws {
        var workloads = JobWorkloads()
        workloads.register(BikeWorkload.name, BikeWorkload.workload())
        let format = JobGroupFormat.jobs(workloads: workloads)
        let settings = ClusterSettings()
        let spec = try Self.job.taskJobSpec(settings: settings)
        var machine = JobMachine(workloads: workloads)
        #expect(machine.apply(try format.start(spec)) == JobGroupFormat.applied)
        let ledger = JobLedger(book: Self.job.startingBook, recording: true)
        _ = ledger.beginAttempt(user: 3, attempt: 1)
        _ = ledger.accept(user: 3, attempt: 1, ending: .reachedGoal)
        let (events, _) = ledger.takeEvents(limit: .max)
        for command in format.batch(0, [BikeEventsCodec.encodeEvents(events)], []) { #expect(machine.apply(command) == JobGroupFormat.applied) }
        #expect(machine.ends.isEmpty, "no end committed")
        let read = try #require(format.read(machine, settings))
        #expect(Set(read.ends.keys) == [3], "the counted user is not run again")
        #expect(read.ends[3]?.output == "")
    }

    /// A run hands its events out in chunks of at most `BikeJobRun.eventsPerChunk`, and the
    /// desk commits each chunk in a command of its own, the last with the ends: every
    /// command fits a frame on its way to the followers (all the events of a batch in one
    /// command made a 6.6 MB call at 16,000 real-time users, over the 8 MiB frame limit
    /// once escaped), every event comes before the ends, and the book is the same as
    /// from one command.
    @Test func manyEventsGoInBoundedCommandsEveryOneBeforeTheEnds() throws {
        var workloads = JobWorkloads()
        workloads.register(BikeWorkload.name, BikeWorkload.workload())
        let format = JobGroupFormat.jobs(workloads: workloads)
        let spec = try Self.job.taskJobSpec(settings: ClusterSettings())
        let ledger = JobLedger(book: Self.job.startingBook, recording: true)
        for attempt in 1...(2 * BikeJobRun.eventsPerChunk + 100) { _ = ledger.beginAttempt(user: attempt % Self.job.options.users, attempt: attempt) }
        var chunks: [String] = []
        var all: [BikeJobBook.Event] = []
        while case let (events, _) = ledger.takeEvents(limit: BikeJobRun.eventsPerChunk), !events.isEmpty {
            chunks.append(BikeEventsCodec.encodeEvents(events))
            all += events
        }
        #expect(chunks.count == 3)
        let end = TaskJobReport.TaskEnd(JobRunner.Outcome(task: 0, output: "", node: "n1", attempts: 1, failures: []))
        let commands = format.batch(0, chunks, [JobMachine.Ended(task: 0, end: end)])
        #expect(commands.count == 3, "a command per chunk, the last with the ends")
        #expect(commands.allSatisfy { $0.utf8.count < JobEndBatches.maximumBytesPerCommand }, "\(commands.map(\.utf8.count))")
        var machine = JobMachine(workloads: workloads)
        #expect(machine.apply(try format.start(spec)) == JobGroupFormat.applied)
        for command in commands.dropLast() { #expect(machine.apply(command) == JobGroupFormat.applied) }
        #expect(machine.ends.isEmpty, "no end before the last chunk of events")
        #expect(machine.apply(try #require(commands.last)) == JobGroupFormat.applied)
        #expect(machine.ends.count == 1)
        var whole = JobMachine(workloads: workloads)
        #expect(whole.apply(try format.start(spec)) == JobGroupFormat.applied)
        for command in format.batch(0, [BikeEventsCodec.encodeEvents(all)], []) { #expect(whole.apply(command) == JobGroupFormat.applied) }
        #expect(machine.workloadState as? BikeJobBook == whole.workloadState as? BikeJobBook)
        #expect(machine.workloadState as? BikeJobBook == ledger.book)
    }
}
