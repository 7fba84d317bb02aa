/// Job and batch ids: a prefix and eight hex digits, zero-padded (`job-0a3f442b`), so ids
/// line up in `spokes jobs` and logs.
public enum JobIdentifier {
    /// A fresh random id with `prefix` (`job`, `batch`).
    public static func make(_ prefix: String) -> String {
        make(prefix, number: UInt32.random(in: 0...UInt32.max))
    }

    /// A fresh id with `prefix` drawn from `runtime`'s seeds (random on a machine, the
    /// same every run of a simulated seed).
    public static func make(_ prefix: String, runtime: Runtime) -> String {
        make(prefix, number: UInt32(truncatingIfNeeded: runtime.seed()))
    }

    /// The id for `number`: `prefix-` and its eight hex digits.
    public static func make(_ prefix: String, number: UInt32) -> String {
        let digits = String(number, radix: 16)
        return prefix + "-" + String(repeating: "0", count: 8 - digits.count) + digits
    }
}
