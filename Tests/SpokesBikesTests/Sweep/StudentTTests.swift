import Foundation
import Testing
@testable import SpokesBikes

@Suite struct StudentTTests {
    /// t(0.975, df): the two-sided 95% critical values as published to three decimals in
    /// the NIST/SEMATECH e-Handbook of Statistical Methods, table 1.3.6.7.2.
    static let published975: [(Int, Double)] = [
        (1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (5, 2.571), (6, 2.447), (7, 2.365), (8, 2.306), (9, 2.262),
        (10, 2.228), (11, 2.201), (12, 2.179), (13, 2.160), (14, 2.145), (15, 2.131), (16, 2.120), (17, 2.110),
        (18, 2.101), (19, 2.093), (20, 2.086), (21, 2.080), (22, 2.074), (23, 2.069), (24, 2.064), (25, 2.060),
        (26, 2.056), (27, 2.052), (28, 2.048), (29, 2.045), (30, 2.042), (40, 2.021), (50, 2.009), (60, 2.000),
        (80, 1.990), (100, 1.984),
    ]

    @Test(arguments: published975)
    func matchesThePublishedTwoSidedNinetyFivePercentValues(degrees: Int, published: Double) {
        let t = StudentT.quantile(0.975, degreesOfFreedom: degrees)
        #expect(abs(t - published) <= 0.0005, "df \(degrees): \(t), published \(published)")
    }

    /// Other levels from the same table: one-sided 95%, 99.5% and 99.95%.
    @Test func matchesPublishedValuesAtOtherLevels() {
        let cases: [(Double, Int, Double)] = [
            (0.95, 1, 6.314), (0.95, 5, 2.015), (0.95, 30, 1.697), (0.90, 10, 1.372),
            (0.995, 3, 5.841), (0.995, 20, 2.845), (0.9995, 1, 636.619), (0.9995, 10, 4.587),
        ]
        for (p, degrees, published) in cases {
            let t = StudentT.quantile(p, degreesOfFreedom: degrees)
            #expect(abs(t - published) <= 0.0005, "p \(p) df \(degrees): \(t), published \(published)")
        }
    }

    /// With one and two degrees of freedom the quantile has a closed form:
    /// tan(pi (p - 1/2)), and (2p - 1) / sqrt(2 p (1 - p)).
    @Test func equalsTheClosedFormsForOneAndTwoDegreesOfFreedom() {
        for p in [0.6, 0.75, 0.9, 0.975, 0.99, 0.999] {
            let one = tan(Double.pi * (p - 0.5))
            let two = (2 * p - 1) / (2 * p * (1 - p)).squareRoot()
            #expect(abs(StudentT.quantile(p, degreesOfFreedom: 1) - one) <= 1e-9 * one, "p \(p)")
            #expect(abs(StudentT.quantile(p, degreesOfFreedom: 2) - two) <= 1e-9 * two, "p \(p)")
        }
    }

    @Test func approachesTheNormalQuantileAsDegreesGrow() {
        // z(0.975) = 1.959963985 (the normal distribution's two-sided 95% value).
        #expect(abs(StudentT.quantile(0.975, degreesOfFreedom: 1_000_000) - 1.959963985) <= 1e-5)
        #expect(abs(StudentT.quantile(0.975, degreesOfFreedom: 99_999) - 1.959963985) <= 5e-5)
    }

    @Test func isSymmetricAndInvertsTheCumulativeDistribution() {
        for degrees in [1, 3, 7, 31, 250] {
            for p in [0.01, 0.2, 0.5, 0.8, 0.975] {
                let t = StudentT.quantile(p, degreesOfFreedom: degrees)
                #expect(abs(StudentT.cumulative(t, degreesOfFreedom: degrees) - p) <= 1e-10, "df \(degrees) p \(p)")
                #expect(abs(StudentT.quantile(1 - p, degreesOfFreedom: degrees) + t) <= 1e-9 * max(1, abs(t)))
            }
        }
        #expect(StudentT.cumulative(0, degreesOfFreedom: 4) == 0.5)
    }

    @Test func refusesWhatHasNoQuantile() {
        #expect(StudentT.quantile(0, degreesOfFreedom: 3).isNaN)
        #expect(StudentT.quantile(1, degreesOfFreedom: 3).isNaN)
        #expect(StudentT.quantile(0.975, degreesOfFreedom: 0).isNaN)
        #expect(StudentT.quantile(.nan, degreesOfFreedom: 3).isNaN)
    }
}
