import Testing
@testable import SpokesBikes

@Suite struct SeededGeneratorTests {
    @Test func splitMixMatchesThePublishedSequence() {
        // Vigna's splitmix64.c seeded with 1234567.
        var mixer = SplitMix64(state: 1_234_567)
        #expect((0..<3).map { _ in mixer.next() } == [6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423])
    }

    @Test func sameSeedAndStreamGiveTheSameSequence() {
        var first = SeededGenerator(seed: 42, stream: 3)
        var second = SeededGenerator(seed: 42, stream: 3)
        #expect((0..<100).map { _ in first.next() } == (0..<100).map { _ in second.next() })
    }

    @Test func streamsAndSeedsAreIndependent() {
        var base = SeededGenerator(seed: 42, stream: 0)
        var otherStream = SeededGenerator(seed: 42, stream: 1)
        var otherSeed = SeededGenerator(seed: 43, stream: 0)
        let a = (0..<8).map { _ in base.next() }
        #expect(a != (0..<8).map { _ in otherStream.next() })
        #expect(a != (0..<8).map { _ in otherSeed.next() })
    }

    @Test func indexBelowStaysInRangeAndCoversItEvenly() {
        var random = SeededGenerator(seed: 7)
        var counts = [Int](repeating: 0, count: 7)
        for _ in 0..<70_000 {
            let index = random.index(below: 7)
            #expect((0..<7).contains(index))
            counts[index] += 1
        }
        // Each bucket expects 10,000; a fair draw stays well within 5%.
        #expect(counts.allSatisfy { abs($0 - 10_000) < 500 }, "uneven buckets: \(counts)")
    }

    @Test func indexBelowOneIsAlwaysZero() {
        var random = SeededGenerator(seed: 1)
        #expect((0..<100).allSatisfy { _ in random.index(below: 1) == 0 })
    }
}
