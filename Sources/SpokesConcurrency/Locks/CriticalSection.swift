import Foundation

/// A re-entrant mutual-exclusion lock: while one thread runs code inside the critical
/// section no other thread does, and the thread inside may enter again without
/// deadlocking itself.
///
/// ```swift
/// let section = CriticalSection()
/// section.execute { counter += 1 }
/// if !section.executeWithTimeout(1.0, { counter += 1 }) { /* not won in time */ }
/// ```
///
/// Built on a recursive POSIX mutex; `executeWithTimeout` waits with
/// `pthread_mutex_timedlock`, whose deadline is on the wall clock (the monotonic
/// `pthread_mutex_clocklock` is not exported to Swift), so a wall-clock jump during the
/// wait shortens or stretches it. The lock is always released when the body
/// returns or throws. These calls block the calling thread: use them from threads,
/// not from async code on the cooperative pool.
public final class CriticalSection: @unchecked Sendable {
    // Sendable: the only state is the mutex, allocated once at a stable address and
    // touched only through pthread calls, which are themselves thread-safe.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` inside the critical section, waiting as long as it takes to enter.
    public func execute<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Runs `body` inside the critical section if it can be entered within `seconds`;
    /// returns false, running nothing, if it cannot.
    @discardableResult
    public func executeWithTimeout(_ seconds: Double, _ body: () throws -> Void) rethrows -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let wait = max(0, seconds)
        var deadline = timespec(tv_sec: now.tv_sec + Int(wait), tv_nsec: now.tv_nsec + Int((wait - wait.rounded(.down)) * 1e9))
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        guard pthread_mutex_timedlock(mutex, &deadline) == 0 else { return false }
        defer { pthread_mutex_unlock(mutex) }
        try body()
        return true
    }
}
