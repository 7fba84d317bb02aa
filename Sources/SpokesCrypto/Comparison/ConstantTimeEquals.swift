/// Whether `a` and `b` hold the same bytes, taking the same time wherever they first
/// differ, so that a forger cannot learn a tag byte by byte from response times.
///
/// Every byte pair is visited and folded into one accumulated difference with XOR and OR;
/// the only branch is on the lengths, which are public (a tag's size is no secret).
public func constantTimeEquals<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for (x, y) in zip(a, b) { difference |= x ^ y }
    return difference == 0
}
