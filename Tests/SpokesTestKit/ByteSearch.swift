extension Array where Element == UInt8 {
    /// Whether `subsequence` appears in these bytes, contiguously: what a test of sealed
    /// frames asks of a marker that must not be readable on the wire.
    public func contains(subsequence: [UInt8]) -> Bool {
        guard !subsequence.isEmpty else { return true }
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
