import FoundationEssentials
import SpokesBikes
import SpokesConcurrency

/// A finished job's report as one self-contained HTML5 file: inline CSS and SVG, no
/// scripts, nothing fetched. It opens in any browser and prints on A4.
///
/// Sections: the verdict on bikes (conserved or not), the key figures, the summary in
/// the terminal's words (`spokes simulate`), users per node (cluster jobs), histograms of
/// waiting time and paths per user, station fill before and after on two maps, and the
/// retries and failures with every reason. Every name and reason is HTML-escaped; the
/// same report always renders to the same bytes.
public enum JobReportPage {
    /// Rows of retried or failed users listed before "and N more".
    static let listedUsers = 200
    /// Stations listed under "Biggest changes".
    static let listedChanges = 10

    /// The report page of `report`: it says when the job finished (from the report) and,
    /// separately, when the page was made (`generatedAt`), both in UTC.
    public static func html(_ report: SimulationReport, generatedAt: Date) -> String {
        let title = "\(report.network.name) (\(report.network.id))" + (report.job.map { " · \($0)" } ?? "")
        var page = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="generator" content="Spokes">
            <title>Spokes report: \(HTML.escape(title))</title>
            <style>\(style)</style>
            </head>
            <body>
            <main>

            """
        page += masthead(report, generatedAt: generatedAt)
        page += verdict(report)
        page += figures(report)
        page += summary(report)
        if let shares = report.tasksPerNode { page += nodeSplit(shares, users: report.users) }
        page += distributions(report)
        page += stationFill(report)
        page += retriesAndFailures(report)
        page += """
            <footer>Made by Spokes. Waiting time and nominal time are counted in moves (move time \
            \(seconds(report.moveTime)) each), whatever the time scale.</footer>
            </main>
            </body>
            </html>

            """
        return page
    }

    // MARK: Sections

    private static func masthead(_ report: SimulationReport, generatedAt: Date) -> String {
        var meta: [String] = []
        if let job = report.job { meta.append("Job <code>\(HTML.escape(job))</code>") }
        meta.append(report.job == nil ? "one process (<code>spokes simulate</code>)" : "cluster job")
        if let finished = report.finishedAt {
            meta.append("finished \(HTML.escape(finished.replacing("T", with: " ").replacing("Z", with: " UTC")))")
        }
        meta.append("page made \(utc(generatedAt))")
        return """
            <header class="masthead">
            <p class="eyebrow"><span class="logo">◎ Spokes</span> · job report</p>
            <h1>\(HTML.escape(report.network.name)) <span class="network-id">(\(HTML.escape(report.network.id)))</span></h1>
            <p class="meta">\(meta.joined(separator: " · "))</p>
            </header>

            """
    }

    /// The first thing to read: did every bike survive, and did every user finish.
    private static func verdict(_ report: SimulationReport) -> String {
        let conservation = report.conservation
        var bikes = "\(conservation.bikesBefore) bikes before, \(conservation.bikesAfter) after"
        if conservation.bikesInUse > 0 { bikes += ", \(conservation.bikesInUse) still ridden" }
        var html = ""
        if conservation.holds {
            html += """
                <section class="verdict ok" id="conservation"><span class="mark">✓</span><div>\
                <p><strong>Bikes conserved</strong></p><p>\(bikes): no bike appeared or vanished, and every \
                station kept its docks.</p></div></section>

                """
        } else {
            let violations = conservation.violations.prefix(listedUsers).map { "<li>\(HTML.escape($0))</li>" }.joined()
            let more = conservation.violations.count > listedUsers ? "<li>and \(conservation.violations.count - listedUsers) more</li>" : ""
            let difference = conservation.bikesBefore - conservation.bikesAfter - conservation.bikesInUse
            let balance = difference > 0 ? "\(difference) bike\(difference == 1 ? "" : "s") missing" :
                difference < 0 ? "\(-difference) bike\(difference == -1 ? "" : "s") too many" : "the totals match"
            html += """
                <section class="verdict bad" id="conservation" role="alert"><span class="mark">⚠</span><div>\
                <p><strong>Bikes NOT conserved</strong></p><p>\(bikes): \(balance).</p>\
                \(violations.isEmpty ? "" : "<ul>\(violations)\(more)</ul>")</div></section>

                """
        }
        let failed = report.failedUsers?.count ?? 0
        if report.cancelled {
            html += """
                <section class="verdict warn" id="outcome"><span class="mark">■</span><div><p><strong>Cancelled</strong></p>\
                <p>The job was cancelled: \(report.completedUsers) of \(report.users) users completed before it stopped.</p>\
                </div></section>

                """
        } else if failed > 0 {
            html += """
                <section class="verdict bad" id="outcome"><span class="mark">✕</span><div>\
                <p><strong>\(failed) user\(failed == 1 ? "" : "s") failed</strong></p><p>Every attempt of \
                \(failed == 1 ? "this user" : "these users") failed; the reasons are listed under Retries and failures.</p>\
                </div></section>

                """
        }
        return html
    }

    private static func figures(_ report: SimulationReport) -> String {
        let averageWait = report.users > 0 ? report.totalWaitingTime / Double(report.users) : 0
        let percent = report.users > 0 ? report.completedUsers * 100 / report.users : 100
        var tiles = [
            figure("Users completed", "\(report.completedUsers) / \(report.users)", "\(percent)%"),
            figure("Paths ridden", "\(report.totalPaths)", "\(report.users) users x \(report.pathsPerUser) paths"),
            figure("Waiting time", seconds(report.totalWaitingTime), "\(seconds(averageWait)) per user"),
            figure("Wall time", seconds(report.wallTime), "\(seconds(report.nominalDuration)) nominal"),
        ]
        if let retries = report.retries {
            tiles.append(figure("Retries", "\(retries)", "\(report.retriedUsers?.count ?? 0) users retried"))
        } else {
            tiles.append(figure("Moves", "\(report.totalMoves)", "\(report.failedTakes + report.failedLeaves) failed"))
        }
        return "<section class=\"figures\">\n" + tiles.joined() + "</section>\n"
    }

    private static func figure(_ name: String, _ value: String, _ detail: String) -> String {
        "<div class=\"figure\"><span class=\"name\">\(name)</span><span class=\"value\">\(HTML.escape(value))</span>"
            + "<span class=\"detail\">\(HTML.escape(detail))</span></div>\n"
    }

    /// The terminal summary's facts, in its words.
    private static func summary(_ report: SimulationReport) -> String {
        let network = report.network
        var rows: [(String, String)] = []
        var networkLine = "\(HTML.escape(network.name)) (\(HTML.escape(network.id))): \(network.stations) "
            + "station\(network.stations == 1 ? "" : "s"), \(report.bikesBefore) bikes"
        if network.stationsWithNullCounts > 0 {
            networkLine += "<br><span class=\"note\">\(network.stationsWithNullCounts) stations had null counts in the data, taken as 0</span>"
        }
        rows.append(("Network", networkLine))
        var workload = "\(report.users) users x \(report.pathsPerUser) paths"
        if let goal = report.goal { workload += ", goal <code>\(HTML.escape(goal))</code>" }
        workload += " · seed \(report.seed) · move time \(seconds(report.moveTime)) · time scale \(compact(report.timeScale))"
        if let workers = report.workers { workload += " · \(workers) at once" }
        rows.append(("Workload", workload))
        var completed = "\(report.completedUsers) of \(report.users)"
        if report.usersReachedGoal > 0 { completed += " (\(report.usersReachedGoal) reached the goal)" }
        if report.usersGaveUp > 0 { completed += " (\(report.usersGaveUp) gave up)" }
        if report.cancelled { completed += " (\(HTML.escape(report.cancelReason ?? "interrupted")))" }
        rows.append(("Users completed", completed))
        rows.append(("Paths ridden", "\(report.totalPaths)"))
        let averageWait = report.users > 0 ? report.totalWaitingTime / Double(report.users) : 0
        var waiting = "\(seconds(report.totalWaitingTime)) in all, \(seconds(averageWait)) per user"
        if let longest = report.results.max(by: { $0.waitingTime < $1.waitingTime }), longest.waitingTime > 0 {
            waiting += ", longest \(seconds(longest.waitingTime)) (user \(longest.user))"
        }
        rows.append(("Waiting time", waiting))
        rows.append(("Moves", "\(report.totalMoves) (failed takes \(report.failedTakes), failed leaves \(report.failedLeaves))"))
        rows.append(("Time", "\(seconds(report.wallTime)) wall, \(seconds(report.nominalDuration)) nominal"))
        let conservation = report.conservation
        var bikes = "\(conservation.bikesBefore) before, \(conservation.bikesAfter) after"
        if conservation.bikesInUse > 0 { bikes += ", \(conservation.bikesInUse) still ridden" }
        bikes += conservation.holds ? ": <span class=\"ok-text\">conserved</span>" : ": <span class=\"bad-text\">NOT CONSERVED</span>"
        rows.append(("Bikes", bikes))
        let empty = report.stations.count { $0.freeBikes == 0 }
        let full = report.stations.count { $0.emptySlots == 0 }
        rows.append(("Stations at end", "\(empty) without bikes, \(full) without empty slots"))
        if let job = report.job {
            rows.append(("Job", "<code>\(HTML.escape(job))</code>"))
            let split = (report.tasksPerNode ?? [:]).sorted { $0.key < $1.key }.map { "\(HTML.escape($0.key)) \($0.value)" }
            rows.append(("Users per node", split.isEmpty ? "none" : split.joined(separator: ", ")))
        }
        if let retries = report.retries { rows.append(("Retries", "\(retries)")) }
        if let failed = report.failedUsers, !failed.isEmpty { rows.append(("Failed users", "\(failed.count)")) }
        if let cancelled = report.cancelledUsers, !cancelled.isEmpty { rows.append(("Cancelled users", "\(cancelled.count)")) }
        let body = rows.map { "<tr><th scope=\"row\">\($0.0)</th><td>\($0.1)</td></tr>" }.joined(separator: "\n")
        return "<section id=\"summary\"><h2>Summary</h2>\n<table class=\"summary\">\n\(body)\n</table></section>\n"
    }

    private static func nodeSplit(_ shares: [String: Int], users: Int) -> String {
        let counted = shares.values.reduce(0, +)
        var note = ""
        if counted < users {
            note = "<p class=\"note\">\(users - counted) of \(users) users have no result from any node (failed or cancelled).</p>"
        }
        let chart = shares.isEmpty ? "<p>No node produced a result.</p>" : NodeShareSVG(shares: shares).svg(label: "Users per node")
        return "<section id=\"nodes\"><h2>Users per node</h2>\n\(chart)\n\(note)</section>\n"
    }

    private static func distributions(_ report: SimulationReport) -> String {
        let waiting = Histogram(values: report.results.map(\.waitingTime), step: report.moveTime)
        let waitingChart = HistogramSVG(
            histogram: waiting, valueAxis: "waiting time per user (nominal seconds)", valueUnit: "s",
            countName: "users", countNameSingular: "user", oneValuePerBin: report.moveTime > 0 && abs(waiting.width - report.moveTime) < 1e-12)
        let paths = Histogram(values: report.results.map { Double($0.paths) }, step: 1)
        let pathsChart = HistogramSVG(
            histogram: paths, valueAxis: "paths ridden per user", valueUnit: "", countName: "users",
            countNameSingular: "user", oneValuePerBin: paths.width == 1)
        let users = report.results.count
        return """
            <section id="distributions"><h2>Per user</h2>
            <div class="pair">
            <figure><figcaption>Waiting time <span class="counts">· \(users) users</span></figcaption>
            \(waitingChart.svg(label: "Histogram of waiting time per user"))</figure>
            <figure><figcaption>Paths ridden <span class="counts">· \(users) users</span></figcaption>
            \(pathsChart.svg(label: "Histogram of paths ridden per user"))</figure>
            </div></section>

            """
    }

    private static func stationFill(_ report: SimulationReport) -> String {
        let after = report.stations.map(StationMapSVG.Station.init)
        let before = report.stationsBefore?.map(StationMapSVG.Station.init)
        let everything = after + (before ?? [])
        let width = 520.0
        let aspect = MapProjection.aspectRatio(of: everything.map { ($0.latitude, $0.longitude) }, within: 0.5...1.4)
        let map = StationMapSVG(fitting: everything, width: width, height: (width * aspect).rounded())
        func caption(_ name: String, _ stations: [StationMapSVG.Station]) -> String {
            let empty = stations.count { $0.bikes == 0 && $0.capacity > 0 }
            let full = stations.count { $0.emptySlots == 0 && $0.capacity > 0 }
            let bikes = stations.reduce(0) { $0 + $1.bikes }
            return "<figcaption>\(name) <span class=\"counts\">· \(bikes) bikes · \(empty) empty · \(full) full</span></figcaption>"
        }
        var html = "<section id=\"stations\"><h2>Station fill</h2>\n" + legend() + "<div class=\"pair\">\n"
        if let before {
            html += "<figure class=\"before\">\(caption("Before", before))\n\(map.svg(before, label: "Stations before the run"))</figure>\n"
        } else {
            html += "<figure class=\"before\"><figcaption>Before</figcaption><p class=\"note\">This report was stored by an older "
                + "version that did not keep the stations as the run found them: only the end is shown.</p></figure>\n"
        }
        html += "<figure class=\"after\">\(caption("After", after))\n\(map.svg(after, label: "Stations after the run"))</figure>\n"
        html += "</div>\n"
        if let beforeStates = report.stationsBefore {
            html += changes(before: beforeStates, after: report.stations)
        }
        return html + "</section>\n"
    }

    /// Swatches from empty to full, and the grey of a station without docks.
    private static func legend() -> String {
        var keys = FillColorScale.legend.map { entry in
            "<span class=\"key\"><svg width=\"12\" height=\"12\" viewBox=\"0 0 12 12\" aria-hidden=\"true\"><circle cx=\"6\" cy=\"6\" "
                + "r=\"5\" fill=\"\(entry.color.hex)\" class=\"swatch-dot\"/></svg>\(entry.label)</span>"
        }
        keys.insert("<span>Bikes / docks:</span>", at: 0)
        keys.append("<span>· red: no bike to take · blue: no slot to leave one · size: docks</span>")
        return "<div class=\"legend\">" + keys.joined() + "</div>\n"
    }

    /// The stations whose bike count moved most, largest change first (ties by position).
    private static func changes(before: [SimulationReport.StationState], after: [SimulationReport.StationState]) -> String {
        struct Change {
            var index: Int
            var old: SimulationReport.StationState
            var new: SimulationReport.StationState
            var delta: Int { new.freeBikes - old.freeBikes }
        }
        var moved: [Change] = []
        for (index, pair) in zip(before, after).enumerated() where pair.0.freeBikes != pair.1.freeBikes {
            moved.append(Change(index: index, old: pair.0, new: pair.1))
        }
        moved.sort { abs($0.delta) != abs($1.delta) ? abs($0.delta) > abs($1.delta) : $0.index < $1.index }
        guard !moved.isEmpty else { return "<p class=\"note\">No station ended with a different number of bikes.</p>\n" }
        var html = "<h3>Biggest changes</h3>\n<table class=\"changes\"><thead><tr><th>Station</th><th class=\"number\">Bikes before</th>"
            + "<th class=\"number\">Bikes after</th><th class=\"number\">Change</th><th class=\"number\">Docks</th></tr></thead><tbody>\n"
        for row in moved.prefix(listedChanges) {
            let sign = row.delta > 0 ? "+" : "−"
            html += "<tr><td>\(HTML.escape(row.new.name))</td><td class=\"number\">\(row.old.freeBikes)</td>"
            html += "<td class=\"number\">\(row.new.freeBikes)</td><td class=\"number\">\(sign)\(abs(row.delta))</td>"
            html += "<td class=\"number\">\(row.new.freeBikes + row.new.emptySlots)</td></tr>\n"
        }
        html += "</tbody></table>\n"
        if moved.count > listedChanges {
            html += "<p class=\"note\">\(moved.count) stations changed in all.</p>\n"
        }
        return html
    }

    private static func retriesAndFailures(_ report: SimulationReport) -> String {
        var html = "<section id=\"retries\" class=\"long\"><h2>Retries and failures</h2>\n"
        if report.cancelled {
            let unfinished = report.users - report.completedUsers
            let who = report.cancelReason.map { " (\(HTML.escape($0)))" } ?? ""
            html += "<p><strong>The job was cancelled\(who).</strong> \(unfinished) user\(unfinished == 1 ? "" : "s") did not complete.</p>\n"
        }
        guard report.job != nil || report.retries != nil else {
            return html + "<p id=\"no-retries\">No retries: a one-process run (<code>spokes simulate</code>) does not retry.</p></section>\n"
        }
        let failed = report.failedUsers ?? []
        let retried = report.retriedUsers ?? []
        let cancelled = report.cancelledUsers?.count ?? 0
        let retries = report.retries ?? 0
        if failed.isEmpty, retried.isEmpty {
            if retries == 0 {
                html += cancelled > 0 ? "" : "<p id=\"no-retries\">No retries: every user completed on its first attempt.</p>\n"
            } else {
                html += "<p>\(retries) retr\(retries == 1 ? "y" : "ies") (this report does not list their reasons).</p>\n"
            }
            return html + "</section>\n"
        }
        html += "<p>\(retries) retr\(retries == 1 ? "y" : "ies") (attempts started again) in all: \(retried.count) user"
            + "\(retried.count == 1 ? "" : "s") completed after a failed attempt, \(failed.count) failed on every attempt"
            + (cancelled > 0 ? ", \(cancelled) stopped by the cancel" : "") + ".</p>\n"
        var budget = listedUsers
        if !failed.isEmpty {
            html += "<h3>Failed users</h3>\n" + userTable(failed, budget: &budget, id: "failed-users")
        }
        if !retried.isEmpty {
            html += "<h3>Retried users</h3>\n" + userTable(retried, budget: &budget, id: "retried-users")
        }
        return html + "</section>\n"
    }

    /// At most `budget` rows (shared between the tables), then "and N more".
    private static func userTable(_ users: [SimulationReport.FailedUser], budget: inout Int, id: String) -> String {
        let shown = users.prefix(max(0, budget))
        budget -= shown.count
        var html = ""
        if !shown.isEmpty {
            html += "<table class=\"users\" id=\"\(id)\"><thead><tr><th>User</th><th>Reasons, attempt by attempt</th></tr></thead><tbody>\n"
            for user in shown {
                let reasons = user.reasons.isEmpty ? "<li>no reason recorded</li>" : user.reasons.map { "<li>\(HTML.escape($0))</li>" }.joined()
                html += "<tr><td>\(user.user)</td><td><ul class=\"reasons\">\(reasons)</ul></td></tr>\n"
            }
            html += "</tbody></table>\n"
        }
        if users.count > shown.count {
            html += "<p class=\"note\">and \(users.count - shown.count) more (see <code>spokes result</code> or the JSON report)</p>\n"
        }
        return html
    }

    // MARK: Wording

    /// Seconds as the terminal prints them: `0 s`, `0.05 s`, `13.7 s`.
    static func seconds(_ value: Double) -> String {
        guard value.isFinite else { return "—" }
        return value == 0 ? "0 s" : String(printf: value < 10 ? "%.2f s" : "%.1f s", value)
    }

    /// `0.25`, `1`, `1000`: a number without a trailing `.0`.
    private static func compact(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    /// `2025-03-04 22:58:46 UTC`.
    static func utc(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { String(printf: "%02d", value ?? 0) }
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) UTC"
    }
}
