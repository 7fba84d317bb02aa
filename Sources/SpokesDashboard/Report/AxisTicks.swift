import FoundationEssentials
import Glibc
import SpokesConcurrency

/// "Nice" axis ticks (1, 2 or 5 times a power of ten) from zero to at least a maximum,
/// and their labels.
enum AxisTicks {
    /// Ticks 0, step, 2 x step, ... up to the first at or above `maximum`, about `count`
    /// of them. `integers` keeps the step at 1 or more (for counts). A maximum of zero,
    /// a negative or a non-finite one gives `[0, 1]`.
    static func upTo(_ maximum: Double, count: Int = 5, integers: Bool = false) -> [Double] {
        guard maximum.isFinite, maximum > 0 else { return [0, 1] }
        var step = niceStep(maximum / Double(max(1, count)))
        if integers { step = max(1, step.rounded(.up)) }
        let steps = min(Int(saturating: (maximum / step - 1e-9).rounded(.up)), 10 * max(1, count))
        return (0...max(1, steps)).map { Double($0) * step }
    }

    /// The smallest of 1, 2, 5 x 10^n at or above `rough` (which must be positive).
    static func niceStep(_ rough: Double) -> Double {
        guard rough.isFinite, rough > 0 else { return 1 }
        let power = pow(10, (log10(rough)).rounded(.down))
        for multiple in [1.0, 2, 5, 10] where multiple * power >= rough * (1 - 1e-9) {
            return multiple * power
        }
        return 10 * power
    }

    /// A tick value as people write it: `0`, `0.3`, `12`, `2.5`, `1500`; no float noise.
    static func label(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        if value.rounded() == value, abs(value) < 1e15 { return String(Int(value)) }
        var text = String(printf: "%.3f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }
}
