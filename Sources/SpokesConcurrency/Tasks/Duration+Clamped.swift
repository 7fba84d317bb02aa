/// Seconds as a `Duration`, or as whole milliseconds, without ever trapping.
///
/// `Duration.seconds(_:)` traps above about 1.7e20 seconds, and `Int(_:)` of a `Double`
/// traps on NaN, infinity and anything beyond the integer's range. Durations in Spokes
/// come from users, files, the environment and peers, so every conversion of seconds
/// goes through ``Duration/clamped(seconds:)`` (and ``Duration/pollMilliseconds``), which
/// saturate instead:
///
/// | seconds | gives |
/// |---|---|
/// | NaN, negative, zero | zero |
/// | above ``Duration/maximumClampedSeconds`` (10^9 s, about 31.7 years), +infinity | ``Duration/maximumClamped`` |
///
/// 10^9 seconds is longer than any node runs, and far below where `Duration` or a
/// clock's instant (now plus the duration, kept in 64-bit nanoseconds by the sleeping
/// machinery) would overflow. Inputs get their own, much smaller, documented ranges where
/// they enter (settings and peers' values are checked against those); this conversion
/// is the floor under them, so a value that slipped past a check delays, never crashes.
extension Duration {
    /// The largest number of seconds ``clamped(seconds:)`` keeps: 10^9 (about 31.7 years).
    public static let maximumClampedSeconds: Double = 1_000_000_000

    /// The longest duration ``clamped(seconds:)`` gives.
    public static let maximumClamped = Duration.seconds(1_000_000_000)

    /// `seconds` as a duration: zero for NaN and anything not above zero,
    /// ``maximumClamped`` for anything above ``maximumClampedSeconds``. Never traps.
    public static func clamped(seconds: Double) -> Duration {
        guard seconds > 0 else { return .zero }
        guard seconds < maximumClampedSeconds else { return maximumClamped }
        return .seconds(seconds)
    }

    /// This duration in whole milliseconds, rounded up (so a wait never ends before its
    /// deadline), from 0 to `Int32.max`: a timeout for `poll(2)`. Never traps.
    public var pollMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        guard seconds < Int64(Int32.max / 1000) else { return Int32.max }
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(min(milliseconds, Int64(Int32.max)))
    }
}

extension FixedWidthInteger {
    /// `value` rounded toward zero, saturating: 0 for NaN, the type's `min` or `max` for
    /// values (and infinities) beyond its range. `Int(_:)` of a `Double` traps there;
    /// this never does.
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value <= Double(Self.min) {
            self = Self.min
        } else if value >= Double(Self.max) {
            // Double(Self.max) rounds up to 2^bits for 64-bit types: at or above it is out of range.
            self = Self.max
        } else {
            self = Self(value)
        }
    }
}
