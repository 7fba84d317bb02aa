import Foundation
import MonteCarloPi
import SpokesCluster
import Testing

struct SplitMix64Tests {
    /// Vigna's reference splitmix64.c, seeded with 0 and with 1234567.
    @Test func matchesTheReferenceOutputs() {
        var zero = SplitMix64(seed: 0)
        #expect((0..<3).map { _ in zero.next() } == [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
        var other = SplitMix64(seed: 1_234_567)
        #expect((0..<3).map { _ in other.next() } == [6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423])
    }

    @Test func unitValuesLieInTheHalfOpenInterval() {
        var generator = SplitMix64(seed: 7)
        for _ in 0..<10_000 {
            let value = generator.nextUnit()
            #expect(value >= 0 && value < 1)
        }
    }
}

struct PiSampleTests {
    @Test func theSameSeedCountsTheSamePointsAndAnotherSeedOthers() throws {
        let first = try PiSample.count(.init(samples: 100_000, seed: 1))
        #expect(first == (try PiSample.count(.init(samples: 100_000, seed: 1))))
        // Pinned (and checked against an independent Python port): every machine counts exactly this.
        #expect(first == PiSample.Output(samples: 100_000, inside: 78_142))
        #expect(first != (try PiSample.count(.init(samples: 100_000, seed: 2))))
    }

    @Test func manySamplesEstimatePi() throws {
        let outputs = try (1...8).map { try PiSample.count(.init(samples: 250_000, seed: $0)) }
        let pi = PiEstimate.pi(from: outputs)
        // Two million points: the standard error is about 0.0012.
        #expect(abs(pi - Double.pi) < 0.005, "pi estimated as \(pi)")
    }

    @Test func samplesOutOfRangeAreRefusedSayingTheRange() throws {
        let registry = TaskRegistry(kinds: [PiSample()])
        let settings = ClusterSettings()
        for samples in [0, -1, 1_000_000_001] {
            #expect(throws: TaskError.invalidInput(kind: "pi.sample", reason: "InputError.samplesOutOfRange: samples must be from 1 to 1000000000, got \(samples)")) {
                try registry.check(kind: "pi.sample", input: #"{"samples": \#(samples), "seed": 1}"#, settings: settings)
            }
        }
        #expect(throws: TaskError.invalidInput(kind: "pi.sample", reason: "missing field 'seed'")) {
            try registry.check(kind: "pi.sample", input: #"{"samples": 10}"#, settings: settings)
        }
        try registry.check(kind: "pi.sample", input: #"{"samples": 1000000000, "seed": -3}"#, settings: settings)
    }

    @Test func aCancelledCountStops() {
        #expect(throws: CancellationError.self) { try PiSample.count(.init(samples: 10_000_000, seed: 1), isCancelled: { true }) }
    }

    @Test func itIsACpuKindOfVersionOne() {
        #expect(PiSample.cost == .cpu && PiSample.version == "1")
        #expect(PiSample.schema.name == "pi.sample")
    }
}
