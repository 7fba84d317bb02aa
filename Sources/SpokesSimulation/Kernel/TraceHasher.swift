/// FNV-1a over the events of a run: same seed, same hash. (Swift's `Hasher` is seeded
/// per process, so it cannot be used for a hash meant to be compared across runs.)
public struct TraceHasher: Sendable, Hashable {
    public private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    public init() {}

    public mutating func combine(_ word: UInt64) {
        var word = word
        for _ in 0..<8 {
            value = (value ^ (word & 0xFF)) &* 0x0000_0100_0000_01B3
            word >>= 8
        }
    }

    public mutating func combine(_ number: Int) { combine(UInt64(bitPattern: Int64(number))) }

    public mutating func combine(_ number: Double) { combine(number.bitPattern) }

    public mutating func combine(_ flag: Bool) { combine(flag ? 1 : 0) }

    public mutating func combine(_ text: String) {
        for byte in text.utf8 { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        combine(text.utf8.count)
    }
}

/// Something that can go into a run's trace: a deterministic fingerprint for the hash,
/// and a description for the printed trace.
public protocol SimulationTraceable: CustomStringConvertible {
    func trace(into hasher: inout TraceHasher)
}
