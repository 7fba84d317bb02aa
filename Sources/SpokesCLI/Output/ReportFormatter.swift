import FoundationEssentials
import SpokesBikes
import SpokesConcurrency

/// Turns a ``SimulationReport`` into what `spokes simulate` prints.
enum ReportFormatter {
    /// The report as pretty JSON with sorted keys (stable for diffs and scripts).
    static func json(_ report: SimulationReport) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(report), as: UTF8.self)
    }

    /// A readable summary, one fact per line.
    static func summary(_ report: SimulationReport) -> String {
        let network = report.network
        var lines: [String] = []
        let stationCount = "\(network.stations) station\(network.stations == 1 ? "" : "s")"
        lines.append("\(network.name) (\(network.id)): \(stationCount), \(report.bikesBefore) bikes")
        if network.stationsWithNullCounts > 0 {
            lines.append("  note: \(network.stationsWithNullCounts) stations had null counts in the data, taken as 0")
        }
        var workload = "\(report.users) users x \(report.pathsPerUser) paths"
        if let goal = report.goal { workload += ", goal \(goal)" }
        workload += " · seed \(report.seed) · move time \(seconds(report.moveTime)) · time scale \(report.timeScale.compactDescription)"
        if let workers = report.workers { workload += " · \(workers) at once" }
        lines.append(workload)
        lines.append("")

        var completed = "\(report.completedUsers) of \(report.users)"
        if report.usersReachedGoal > 0 { completed += " (\(report.usersReachedGoal) reached the goal)" }
        if report.usersGaveUp > 0 { completed += " (\(report.usersGaveUp) gave up)" }
        if report.cancelled { completed += " (\(report.cancelReason ?? "interrupted"))" }
        row(&lines, "Users completed", completed)
        row(&lines, "Paths ridden", "\(report.totalPaths)")
        let averageWait = report.users > 0 ? report.totalWaitingTime / Double(report.users) : 0
        var waiting = "\(seconds(report.totalWaitingTime)) in all, \(seconds(averageWait)) per user"
        if let longest = report.results.max(by: { $0.waitingTime < $1.waitingTime }), longest.waitingTime > 0 {
            waiting += ", longest \(seconds(longest.waitingTime)) (user \(longest.user))"
        }
        row(&lines, "Waiting time", waiting)
        row(&lines, "Moves", "\(report.totalMoves) (failed takes \(report.failedTakes), failed leaves \(report.failedLeaves))")
        row(&lines, "Time", "\(seconds(report.wallTime)) wall, \(seconds(report.nominalDuration)) nominal")
        let conservation = report.conservation
        var bikes = "\(conservation.bikesBefore) before, \(conservation.bikesAfter) after"
        if conservation.bikesInUse > 0 { bikes += ", \(conservation.bikesInUse) still ridden" }
        bikes += conservation.holds ? ": conserved" : ": NOT CONSERVED"
        row(&lines, "Bikes", bikes)
        for violation in conservation.violations { lines.append("  violation: \(violation)") }
        let empty = report.stations.count { $0.freeBikes == 0 }
        let full = report.stations.count { $0.emptySlots == 0 }
        row(&lines, "Stations at end", "\(empty) without bikes, \(full) without empty slots")
        if let job = report.job {
            row(&lines, "Job", job)
            let split = (report.tasksPerNode ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            row(&lines, "Users per node", split.isEmpty ? "none" : split.joined(separator: ", "))
            row(&lines, "Retries", "\(report.retries ?? 0)")
            if let epoch = report.epoch, epoch > 0 {
                row(&lines, "Epochs", "\(epoch + 1) (it went on after losing its coordinator)")
            }
            let failed = report.failedUsers ?? []
            if !failed.isEmpty {
                row(&lines, "Failed users", "\(failed.count)")
                for user in failed.prefix(10) {
                    lines.append("  user \(user.user): " + user.reasons.joined(separator: "; "))
                }
                if failed.count > 10 { lines.append("  ... and \(failed.count - 10) more (see --json)") }
            }
            let cancelled = report.cancelledUsers ?? []
            if !cancelled.isEmpty {
                row(&lines, "Cancelled users", "\(cancelled.count)" + (report.cancelReason.map { " (\($0))" } ?? ""))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func row(_ lines: inout [String], _ label: String, _ value: String) {
        lines.append(label.padded(to: 17) + value)
    }

    private static func seconds(_ value: Double) -> String {
        value == 0 ? "0 s" : String(printf: value < 10 ? "%.2f s" : "%.1f s", value)
    }
}
