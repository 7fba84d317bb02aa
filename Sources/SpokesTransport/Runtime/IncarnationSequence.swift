import SpokesConcurrency
import Synchronization

/// Where a node takes its incarnation number as it starts (``Runtime/incarnations``): its
/// runtime's wall clock in microseconds, above every number this sequence handed out
/// before. So a restart's incarnation is newer than the run it replaces (membership keeps
/// the newer one of a name), even when two starts fall in one microsecond, as they do in
/// virtual time: a simulated cluster shares one sequence among all its nodes, so a node
/// started at the same virtual instant as another of its name is still the later one.
/// On a virtual clock the numbers are the same every run of a seed.
public final class IncarnationSequence: Sendable {
    private let clock: any RuntimeClock
    private let last = Atomic<UInt64>(0)

    public init(clock: any RuntimeClock) {
        self.clock = clock
    }

    /// A number above every one handed out before: the wall clock's microseconds, or the
    /// last number plus one.
    public func next() -> UInt64 {
        let time = UInt64(min(max(clock.unixNow, 0), 1e12) * 1_000_000)
        var last = last.load(ordering: .relaxed)
        while true {
            let next = max(time, last + 1)
            let (exchanged, current) = self.last.compareExchange(expected: last, desired: next, ordering: .relaxed)
            if exchanged { return next }
            last = current
        }
    }
}
