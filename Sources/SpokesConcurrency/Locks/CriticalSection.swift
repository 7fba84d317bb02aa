#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A re-entrant mutual-exclusion lock: while one thread runs code inside a critical section, no
/// other thread runs code inside the same instance.
///
/// - **Re-entrant:** the owning thread may enter again (e.g. a locked method calling another
///   locked method) without deadlocking; the section is released when the outermost entry exits.
/// - **Exception-safe:** the section is released when the body returns *or throws*.
/// - **Bounded waits:** ``executeWithTimeout(_:_:)`` gives up after a deadline and runs nothing,
///   for code that cannot rule out a deadlock.
///
/// This is a blocking lock, meant for short synchronous sections. Calling it from async code is
/// allowed, but a long wait blocks a cooperative-pool thread.
///
/// Design: an explicit owner/depth pair guarded by a plain pthread mutex, plus a condition
/// variable signalled on release. Not a recursive pthread mutex with `pthread_mutex_timedlock`
/// because that call measures its deadline on the wall clock (`CLOCK_REALTIME`), so a clock
/// adjustment can stretch or cut a timeout, and it does not exist on Darwin. The condition
/// variable here waits through the runtime's timed wait (``RealClock/wait(on:holding:until:)``),
/// against `CLOCK_MONOTONIC` on Linux and with a relative timeout on Darwin.
///
/// Invariant: `owner == nil` exactly when `depth == 0`; both are read and written only while
/// `mutex` is held.
public final class CriticalSection: @unchecked Sendable {
    // Why `@unchecked Sendable` is sound: the only mutable stored state is `owner` and `depth`,
    // and every access to them happens between `pthread_mutex_lock(mutex)` and
    // `pthread_mutex_unlock(mutex)`. The pthread objects live at fixed heap addresses (they must
    // never be moved), are initialised before `init` returns and destroyed only in `deinit`, when
    // no other reference — and so no other thread — can use the instance.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let released: UnsafeMutablePointer<pthread_cond_t>
    private var owner: pthread_t?
    private var depth = 0

    /// A critical section nobody holds.
    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")

        released = .allocate(capacity: 1)
        released.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if !canImport(Darwin)
        // Deadlines are `RealClock` instants (``RealClock/ThreadDeadline``): the same clock.
        pthread_condattr_setclock(&attributes, RealClock.monotonicClockID)
        #endif
        precondition(pthread_cond_init(released, &attributes) == 0, "pthread_cond_init failed")
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(released)
        released.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` once the calling thread holds the section, waiting as long as necessary, and
    /// returns what `body` returns. The section is released even if `body` throws.
    public func execute<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        _ = acquire(timeout: nil)
        defer { release() }
        return try body()
    }

    /// Runs `body` if the calling thread can hold the section within `seconds`, and returns
    /// `true`; otherwise runs nothing and returns `false`. A thread that already holds the
    /// section enters at once. Zero, negative or NaN timeouts make a single attempt.
    /// The section is released even if `body` throws.
    public func executeWithTimeout<E: Error>(_ seconds: Double, _ body: () throws(E) -> Void) throws(E) -> Bool {
        guard acquire(timeout: seconds) else { return false }
        defer { release() }
        try body()
        return true
    }

    /// Takes the section for the calling thread. `timeout == nil` waits forever.
    /// Returns whether the section was taken.
    private func acquire(timeout: Double?) -> Bool {
        let me = pthread_self()
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }

        if let owner, pthread_equal(owner, me) != 0 {
            depth += 1
            return true
        }
        if let timeout {
            let deadline = RealClock.ThreadDeadline(after: timeout)
            while owner != nil {
                // Check the predicate before giving up: a release may coincide with the timeout.
                if !RealClock.wait(on: released, holding: mutex, until: deadline) && owner != nil { return false }
            }
        } else {
            while owner != nil { pthread_cond_wait(released, mutex) }
        }
        owner = me
        depth = 1
        return true
    }

    private func release() {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        precondition(depth > 0 && owner.map { pthread_equal($0, pthread_self()) != 0 } == true,
                     "CriticalSection released by a thread that does not hold it")
        depth -= 1
        if depth == 0 {
            owner = nil
            pthread_cond_signal(released)
        }
    }

}
