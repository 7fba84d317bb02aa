import Foundation

/// Finished jobs, one JSON line each, in `jobs.jsonl` under a node's data directory.
///
/// Each line is written with a single `write` to a file opened for appending, so nodes
/// sharing a data directory do not interleave their lines. A line that does not decode
/// (a crash mid-write) is skipped when reading.
public struct JobStore: Sendable {
    /// One finished job, as `spokes jobs` lists it.
    public struct Summary: Sendable, Hashable, Codable {
        public var job: String
        /// When it finished, ISO 8601.
        public var finished: String
        public var coordinator: String
        public var network: String
        public var users: Int
        public var completedUsers: Int
        public var failedUsers: Int
        public var cancelled: Bool
        public var wallTime: Double
    }

    private struct Line: Codable {
        var summary: Summary
        var report: SimulationReport
    }

    public let path: String

    /// The store in `directory` (`~` expands to the home directory).
    public init(directory: String) {
        let expanded = (directory as NSString).expandingTildeInPath
        path = (expanded as NSString).appendingPathComponent("jobs.jsonl")
    }

    /// Appends a finished job's report.
    public func append(_ report: SimulationReport, coordinator: String) throws {
        let summary = Summary(
            job: report.job ?? "?", finished: ISO8601DateFormatter().string(from: Date()), coordinator: coordinator,
            network: report.network.id, users: report.users, completedUsers: report.completedUsers,
            failedUsers: report.failedUsers?.count ?? 0, cancelled: report.cancelled, wallTime: report.wallTime)
        var line = try JSONEncoder().encode(Line(summary: summary, report: report))
        line.append(UInt8(ascii: "\n"))
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        defer { close(fd) }
        let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == line.count else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
    }

    /// Every stored job, oldest first.
    public func summaries() throws -> [Summary] {
        try lines().map(\.summary)
    }

    /// The report of `job`, or nil when it is not stored here.
    public func report(of job: String) throws -> SimulationReport? {
        try lines().last { $0.summary.job == job }?.report
    }

    private func lines() throws -> [Line] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let decoder = JSONDecoder()
        return data.split(separator: UInt8(ascii: "\n")).compactMap { try? decoder.decode(Line.self, from: Data($0)) }
    }
}
