import Glibc

/// Seconds on the monotonic clock: what membership measures silence with. Not affected
/// by changes of the wall clock.
enum MonotonicClock {
    static var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
