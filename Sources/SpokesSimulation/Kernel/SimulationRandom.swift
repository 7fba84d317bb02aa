/// The simulator's one generator (xoshiro256**, seeded through SplitMix64): everything
/// a run decides by chance (the fault plan, each message's delay, loss and duplication,
/// timer jitter, the models' own draws) comes from it in event order, so a seed
/// replays a run exactly. Our own bounded and floating-point draws keep the sequence
/// independent of the standard library.
public struct SimulationRandom: RandomNumberGenerator, Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    public init(seed: UInt64) {
        var mixer = seed
        func splitMix() -> UInt64 {
            mixer &+= 0x9E37_79B9_7F4A_7C15
            var z = mixer
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        state = (splitMix(), splitMix(), splitMix(), splitMix())
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

    /// Uniform in `0..<bound` (Lemire's method); `bound` must be positive.
    public mutating func index(below bound: Int) -> Int {
        precondition(bound > 0, "index(below:) needs a positive bound")
        let range = UInt64(bound)
        var product = next().multipliedFullWidth(by: range)
        if product.low < range {
            let threshold = (0 &- range) % range
            while product.low < threshold { product = next().multipliedFullWidth(by: range) }
        }
        return Int(product.high)
    }

    public mutating func uniform(in range: ClosedRange<Double>) -> Double {
        range.lowerBound + Double(next() >> 11) / Double(1 << 53) * (range.upperBound - range.lowerBound)
    }

    public mutating func integer(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + index(below: range.upperBound - range.lowerBound + 1)
    }

    /// True with probability `probability`.
    public mutating func chance(_ probability: Double) -> Bool {
        probability > 0 && uniform(in: 0...1) < probability
    }

    public mutating func element<T>(of array: [T]) -> T {
        array[index(below: array.count)]
    }

    private func rotateLeft(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }
}
