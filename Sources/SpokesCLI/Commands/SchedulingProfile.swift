import FoundationEssentials
import SpokesCluster
import SpokesConcurrency

/// Where the time of a batch of equal tasks went, from the task attempts every worker
/// recorded (``TaskTimeline``): how long until the first task started, how much longer
/// than asked each task took, how long each slot stood empty between two tasks, and how
/// long after the last task the result was in. `spokes bench --profile` prints it for
/// the scaling figure; every process of one machine shares the monotonic clock, so the
/// nodes' times compare directly.
struct SchedulingProfile: Sendable {
    /// Seconds from scheduling the first task to its start.
    var lead: Double
    /// Seconds from the last task's end to the batch's result.
    var tail: Double
    /// Seconds each task took beyond its nominal length: p50 and max.
    var overrun: (p50: Double, max: Double)
    /// Seconds a slot stood empty between two tasks: p50, p90, max and the sum per slot (mean).
    var gap: (p50: Double, p90: Double, max: Double, perSlot: Double)
    /// Most tasks one slot ran.
    var rounds: Int

    /// The profile of the spans of one batch that began at `start` (monotonic seconds) and
    /// took `wall` seconds, each task nominally `nominal` seconds; nil without spans.
    init?(spans: [(node: String, span: TaskTimeline.Span)], start: Double, wall: Double, nominal: Double) {
        let ended = spans.filter { $0.span.end != nil }
        guard !ended.isEmpty else { return nil }
        lead = (ended.map(\.span.start).min() ?? start) - start
        tail = start + wall - (ended.compactMap(\.span.end).max() ?? start)
        let overruns = ended.map { $0.span.end! - $0.span.start - nominal }.sorted()
        overrun = (Self.percentile(overruns, 0.5), overruns.last ?? 0)
        var gaps: [Double] = []
        var slots: [String: [TaskTimeline.Span]] = [:]
        for (node, span) in ended { slots["\(node)/\(span.slot)", default: []].append(span) }
        for spans in slots.values {
            let ordered = spans.sorted { $0.start < $1.start }
            for (previous, next) in zip(ordered, ordered.dropFirst()) { gaps.append(max(0, next.start - previous.end!)) }
        }
        gaps.sort()
        gap = (Self.percentile(gaps, 0.5), Self.percentile(gaps, 0.9), gaps.last ?? 0, gaps.reduce(0, +) / Double(slots.count))
        rounds = slots.values.map(\.count).max() ?? 0
    }

    var text: String {
        String(printf: """
            first task started %.1f ms after scheduling began; the result came %.1f ms after the last task ended; \
            a task took %.2f ms longer than asked (p50; max %.2f); a slot stood empty %.2f ms between tasks \
            (p50; p90 %.2f, max %.2f; %.1f ms per slot in all); %d tasks at most per slot
            """, lead * 1e3, tail * 1e3, overrun.p50 * 1e3, overrun.max * 1e3, gap.p50 * 1e3, gap.p90 * 1e3, gap.max * 1e3,
            gap.perSlot * 1e3, rounds)
    }

    private static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }
}
