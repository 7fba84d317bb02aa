/// A figure a sweep report summarises per group.
public enum SweepFigure: String, Sendable, Hashable, CaseIterable, Codable {
    /// Nominal seconds, total waiting time / users.
    case waitingTimePerUser
    /// Paths ridden in the run, over all users.
    case totalPaths
    case failedTakes
    case failedLeaves

    /// The JSON key, in a run and in a group.
    public var key: String { rawValue }

    /// `waiting time per user`, `paths ridden`, ...
    public var name: String {
        switch self {
        case .waitingTimePerUser: "waiting time per user"
        case .totalPaths: "paths ridden"
        case .failedTakes: "failed takes"
        case .failedLeaves: "failed leaves"
        }
    }

    /// Whether the figure is in nominal seconds (else a count).
    public var isSeconds: Bool { self == .waitingTimePerUser }

    /// The figure's value in `run`; nil when the run has no figures.
    public func value(in run: SweepReport.Run) -> Double? {
        guard let figures = run.figures else { return nil }
        switch self {
        case .waitingTimePerUser: return run.waitingTimePerUser
        case .totalPaths: return Double(figures.totalPaths)
        case .failedTakes: return Double(figures.failedTakes)
        case .failedLeaves: return Double(figures.failedLeaves)
        }
    }
}
