import Synchronization

/// How many times some state kept inside an actor has changed, readable from any thread
/// without a hop onto the actor.
///
/// The owner bumps it after each change, an actor from its state's `didSet` (a `didSet`
/// that does not read `oldValue` lets the state be mutated in place, so the count costs
/// one atomic add per change). A reader that checked the state while the count was `n`
/// and sees `n` again knows nothing changed since, and need not hop onto the actor (or
/// take the lock) to read it again: the simulator's invariants (`NodesSafety`) check
/// every node's worker, coordinators, replicas and membership after every event, and
/// most events change none of a node's.
///
/// Read the count *before* reading the state: a change between the two makes the reader
/// look again next time (it recorded the older count), never miss a change.
public final class ChangeCount: Sendable {
    private let count = Atomic<UInt64>(0)

    public init() {}

    /// Changes so far.
    public var value: UInt64 { count.load(ordering: .acquiring) }

    /// One more change (called by the state's owner, after the change).
    public func bump() {
        count.add(1, ordering: .releasing)
    }
}
