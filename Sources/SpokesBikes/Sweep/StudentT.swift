import FoundationEssentials
import Glibc

/// Student's t distribution: its CDF and quantiles, for confidence intervals of a mean
/// from few runs.
///
/// The CDF comes from the regularized incomplete beta function,
/// P(T <= t) = 1 - I_x(v/2, 1/2) / 2 for t >= 0 with x = v / (v + t^2), evaluated by its
/// continued fraction (modified Lentz); a quantile is found by bisection on that CDF to
/// about 1e-12 relative. Exact for every number of degrees of freedom, not a table.
public enum StudentT {
    /// The t with P(T <= t) = `p`, for `p` in (0, 1) and at least one degree of freedom;
    /// NaN otherwise. `quantile(0.975, degreesOfFreedom: 4)` is 2.776445...
    public static func quantile(_ p: Double, degreesOfFreedom: Int) -> Double {
        guard p > 0, p < 1, degreesOfFreedom >= 1 else { return .nan }
        if p == 0.5 { return 0 }
        if p < 0.5 { return -quantile(1 - p, degreesOfFreedom: degreesOfFreedom) }
        // Solve upperTail(t) = 1 - p for t > 0: the tail falls as t grows.
        let target = 1 - p
        let v = Double(degreesOfFreedom)
        var low = 0.0, high = 1.0
        while upperTail(high, v) > target, high < 1e300 { low = high; high *= 2 }
        for _ in 0..<2_000 {
            let middle = (low + high) / 2
            if middle == low || middle == high || high - low <= 1e-13 * high { break }
            if upperTail(middle, v) > target { low = middle } else { high = middle }
        }
        return (low + high) / 2
    }

    /// P(T <= t) with `degreesOfFreedom` degrees of freedom (at least one; NaN otherwise).
    public static func cumulative(_ t: Double, degreesOfFreedom: Int) -> Double {
        guard degreesOfFreedom >= 1, !t.isNaN else { return .nan }
        let tail = upperTail(abs(t), Double(degreesOfFreedom))
        return t >= 0 ? 1 - tail : tail
    }

    /// P(T > t) for t >= 0.
    private static func upperTail(_ t: Double, _ v: Double) -> Double {
        guard t.isFinite else { return 0 }
        return 0.5 * regularizedIncompleteBeta(v / (v + t * t), a: v / 2, b: 0.5)
    }

    /// I_x(a, b) for x in [0, 1] and a, b > 0 (Numerical Recipes' `betai`): the continued
    /// fraction converges fast for x < (a + 1) / (a + b + 2); beyond that the symmetry
    /// I_x(a, b) = 1 - I_(1-x)(b, a) brings x back below it.
    static func regularizedIncompleteBeta(_ x: Double, a: Double, b: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return 1 }
        let logFront = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x)
        let front = exp(logFront)
        if x < (a + 1) / (a + b + 2) {
            return front * continuedFraction(x, a: a, b: b) / a
        }
        return 1 - front * continuedFraction(1 - x, a: b, b: a) / b
    }

    /// The continued fraction of I_x(a, b) by the modified Lentz method.
    private static func continuedFraction(_ x: Double, a: Double, b: Double) -> Double {
        let tiny = 1e-300, epsilon = 1e-16
        var c = 1.0
        var d = 1 - (a + b) * x / (a + 1)
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var result = d
        for m in 1...100_000 {
            let m = Double(m), twoM = 2 * m
            // Even step.
            var term = m * (b - m) * x / ((a + twoM - 1) * (a + twoM))
            d = 1 + term * d
            if abs(d) < tiny { d = tiny }
            c = 1 + term / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            result *= d * c
            // Odd step.
            term = -(a + m) * (a + b + m) * x / ((a + twoM) * (a + twoM + 1))
            d = 1 + term * d
            if abs(d) < tiny { d = tiny }
            c = 1 + term / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let change = d * c
            result *= change
            if abs(change - 1) < epsilon { break }
        }
        return result
    }
}
