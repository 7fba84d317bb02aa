/// A seedable random number generator (xoshiro256**, seeded through SplitMix64).
///
/// Each user draws from its own stream, derived from the run's seed and the user's
/// number, so a user's choices do not depend on how many other users run or in which
/// order they are scheduled. With one worker the whole run is reproducible.
///
/// `index(below:)` is our own unbiased bounded draw (Lemire's method), so the
/// sequence of stations for a seed does not change with the standard library.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    /// A generator for `stream` (for example a user number) of the run seeded with `seed`.
    public init(seed: UInt64, stream: UInt64 = 0) {
        var mixer = SplitMix64(state: seed ^ (stream &* 0xD1B5_4A32_D192_ED03))
        state = (mixer.next(), mixer.next(), mixer.next(), mixer.next())
        if state == (0, 0, 0, 0) { state.0 = 1 }
    }

    public mutating func next() -> UInt64 {
        let result = rotateLeft(state.1 &* 5, 7) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = rotateLeft(state.3, 45)
        return result
    }

    /// A uniformly random integer in `0..<bound`. `bound` must be positive.
    public mutating func index(below bound: Int) -> Int {
        precondition(bound > 0, "index(below:) needs a positive bound")
        let range = UInt64(bound)
        var product = next().multipliedFullWidth(by: range)
        if product.low < range {
            let threshold = (0 &- range) % range
            while product.low < threshold {
                product = next().multipliedFullWidth(by: range)
            }
        }
        return Int(product.high)
    }

    private func rotateLeft(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }
}

/// SplitMix64: spreads a seed's bits so that nearby seeds give unrelated streams.
struct SplitMix64 {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
