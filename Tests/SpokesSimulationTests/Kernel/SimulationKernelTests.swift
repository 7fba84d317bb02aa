import Testing
@testable import SpokesSimulation

@Suite struct SimulationKernelTests {
    func run(_ faults: [SimulationFault], seed: UInt64 = 1, settle: Double = 3) -> (PingModel, SimulationResult) {
        let (result, model) = Simulation<PingModel>.play(PingModel(), options: SimulationOptions(seed: seed, settle: settle, recordTrace: true), faults: faults)
        return (model, result)
    }

    @Test func aHealthyNetworkDeliversEveryPingInABoundedDelay() {
        let (model, _) = run([])
        let arrivals = model.arrivals(at: "b", from: "a")
        #expect(arrivals.count >= 25)
        #expect(arrivals.map(\.ping.number) == Array(1...arrivals.count), "every ping, none twice")
    }

    @Test func aOneWayPartitionCutsOnlyOneDirection() {
        let (model, _) = run([SimulationFault(start: 1, duration: 1, effect: .partition(isolated: ["a"], direction: .outbound))])
        let fromA = model.arrivals(at: "b", from: "a").map(\.time)
        let toA = model.arrivals(at: "a", from: "b").map(\.time)
        #expect(!fromA.contains { $0 > 1.01 && $0 < 2 }, "a is not heard while cut off")
        #expect(toA.contains { $0 > 1.01 && $0 < 2 }, "a still hears the others")
        #expect(fromA.contains { $0 > 2.01 }, "the partition heals")
    }

    @Test func aPausedNodeGetsItsMessagesAndTimersWhenItResumes() {
        let (model, _) = run([SimulationFault(start: 1, duration: 1, effect: .pause(node: "b"))])
        let arrivals = model.arrivals(at: "b", from: "a")
        #expect(!arrivals.contains { $0.time > 1.01 && $0.time < 2 }, "nothing runs on a paused node")
        let atResume = arrivals.filter { abs($0.time - 2) < 1e-9 }
        #expect(atResume.count >= 8, "what arrived during the pause is delivered on resume")
        #expect(arrivals.map(\.ping.number) == Array(1...arrivals.count), "in order, none lost")
        #expect(model.tickTimes["b"]!.contains { abs($0 - 2) < 1e-9 }, "an overdue timer fires on resume")
    }

    @Test func aCrashedNodeLosesWhatWasInFlightAndRestartsAsANewIncarnation() {
        let (model, _) = run([SimulationFault(start: 1, duration: 0.5, effect: .crash(node: "b"))])
        #expect(model.crashes == ["b"])
        #expect(model.incarnations["b"] == 2)
        #expect(!model.arrivals(at: "b", from: "a").contains { $0.time > 1 && $0.time < 1.5 })
        let ticks = model.tickTimes["b"]!
        #expect(!ticks.contains { $0 > 1 && $0 < 1.5 }, "the old incarnation's timers never fire")
        #expect(ticks.contains { $0 > 1.5 })
    }

    @Test func lossDuplicationAndDelayShapeDelivery() {
        let lossy = run([SimulationFault(start: 0, duration: 3, effect: .loss(rate: 0.5))], settle: 0).0
        let lost = lossy.arrivals(at: "b", from: "a").count
        #expect(lost > 5 && lost < 25, "about half of ~30 pings: \(lost)")
        let doubled = run([SimulationFault(start: 0, duration: 3, effect: .duplication(rate: 1))], settle: 0).0
        let numbers = doubled.arrivals(at: "b", from: "a").map(\.ping.number)
        #expect(numbers.count >= 2 * Set(numbers).count - 1, "every ping twice")
        let delayed = run([SimulationFault(start: 0, duration: 3, effect: .delay(maximum: 0.5))], settle: 0).0
        let order = delayed.arrivals(at: "b", from: "a").map(\.ping.number)
        #expect(order != order.sorted(), "long random delays reorder")
    }

    @Test func aSlowNodesTimersStretch() {
        let model = run([SimulationFault(start: 0, duration: 10, effect: .slow(node: "c", factor: 10))], settle: 0).0
        #expect(model.tickTimes["c"]!.count <= 11 && model.tickTimes["a"]!.count >= 90)
    }

    @Test func theSameSeedGivesTheSameTraceAndOthersDiffer() {
        let options = SimulationOptions(seed: 42)
        let first = Simulation<PingModel>.run(PingModel(), options: options)
        let second = Simulation<PingModel>.run(PingModel(), options: options)
        #expect(first.traceHash == second.traceHash)
        #expect(first.events == second.events)
        let hashes = Set((1...30).map { Simulation<PingModel>.run(PingModel(), options: SimulationOptions(seed: $0)).traceHash })
        #expect(hashes.count == 30)
    }

    @Test func shrinkingFindsTheFaultsThatMatter() {
        var model = PingModel()
        model.failWhenCrashed = ["a", "c"]
        let faults = [
            SimulationFault(start: 0.5, duration: 1, effect: .loss(rate: 0.2)),
            SimulationFault(start: 1, duration: 0.3, effect: .crash(node: "a")),
            SimulationFault(start: 1.2, duration: 1, effect: .pause(node: "b")),
            SimulationFault(start: 1.5, duration: 1, effect: .partition(isolated: ["b"], direction: .both)),
            SimulationFault(start: 2, duration: 1, effect: .slow(node: "a", factor: 4)),
            SimulationFault(start: 2.5, duration: 0.2, effect: .crash(node: "b")),
            SimulationFault(start: 3, duration: 0.5, effect: .crash(node: "c")),
            SimulationFault(start: 3.5, duration: 1, effect: .delay(maximum: 0.1)),
        ]
        let options = SimulationOptions(seed: 3)
        let failing = Simulation<PingModel>.run(model, options: options, faults: faults)
        #expect(failing.failed)
        let shrunk = Simulation<PingModel>.shrink(failing, model: { model }, options: options)
        #expect(shrunk.faults == [faults[1], faults[6]])
        #expect(shrunk.failed)
        #expect(shrunk.trace.last?.contains("VIOLATION") == true)
        let report = Simulation<PingModel>.report(shrunk)
        #expect(report.contains("seed 3: at 3.") && report.contains("crash c"))
    }
}
