import Glibc

/// Seconds on the monotonic clock (`CLOCK_MONOTONIC`): what membership measures silence
/// with. Not affected by changes of the wall clock, and the same in every process of a
/// machine, so times read in different processes (a benchmark and its nodes) compare.
public enum MonotonicClock {
    public static var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
