import FoundationEssentials

/// Wall-clock times as ISO 8601 in UTC (`2026-03-04T22:58:46Z`, to the nearest millisecond), computed without a
/// formatter: no locale, no shared state, the same on every system.
public enum UTCTime {
    /// `date` as `2026-03-04T22:58:46Z`, or with `milliseconds` `2026-03-04T22:58:46.123Z`.
    public static func iso8601(_ date: Date, milliseconds: Bool = false) -> String {
        let total = Int64((date.timeIntervalSince1970 * 1_000).rounded())
        let (quotient, remainder) = total.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, inDay) = remainder < 0 ? (quotient - 1, remainder + 86_400_000) : (quotient, remainder)
        // Days since 1970-01-01 to a civil date: Howard Hinnant's civil_from_days.
        let shifted = day + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let dayOfMonth = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let clock = "\(pad(inDay / 3_600_000, 2)):\(pad(inDay / 60_000 % 60, 2)):\(pad(inDay / 1_000 % 60, 2))"
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(dayOfMonth, 2))T\(clock)" + (milliseconds ? ".\(pad(inDay % 1_000, 3))" : "") + "Z"
    }
}
