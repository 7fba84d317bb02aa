/// SplitMix64, for seeded test inputs (fuzzing, random bytes) in every test target.
public struct TestGenerator: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension TestGenerator {
    /// `bytes` with one to three seeded edits, each a byte replaced, removed or inserted:
    /// the hostile input a decoder's mutation tests feed it.
    public mutating func mutated(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        for _ in 0..<Int.random(in: 1...3, using: &self) where !bytes.isEmpty {
            let at = Int.random(in: 0..<bytes.count, using: &self)
            switch Int.random(in: 0..<3, using: &self) {
            case 0: bytes[at] = UInt8.random(in: 0...255, using: &self)
            case 1: bytes.remove(at: at)
            default: bytes.insert(UInt8.random(in: 0...255, using: &self), at: at)
            }
        }
        return bytes
    }
}
