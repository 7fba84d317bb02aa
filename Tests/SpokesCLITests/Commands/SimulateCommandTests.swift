import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCLI

@Suite struct SimulateCommandTests {
    @Test func runsTheBundledMilanoNetworkByDefault() async {
        let run = await CommandRun.spokes("simulate", "--users", "20", "--paths", "3", "--time-scale", "0", "--seed", "1")
        #expect(run.status == 0, "stderr: \(run.standardError)")
        #expect(run.standardOutput.contains("BikeMi (bikemi): 318 stations, 4903 bikes"))
        #expect(run.standardOutput.contains("Users completed  20 of 20"))
        #expect(run.standardOutput.contains("Paths ridden     60"))
        #expect(run.standardOutput.contains("4903 before, 4903 after: conserved"))
    }

    @Test func htmlWritesOneSelfContainedPageBesideTheSummary() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let page = folder.file("report.html")
        let run = await CommandRun.spokes("simulate", "--users", "20", "--paths", "3", "--time-scale", "0", "--seed", "1", "--html", page)
        #expect(run.status == 0, "stderr: \(run.standardError)")
        #expect(run.standardOutput.contains("Users completed  20 of 20"))
        #expect(run.standardError.contains("report written to \(page)"))
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("BikeMi"))
        #expect(html.components(separatedBy: "<svg").count > 3, "histograms and maps are drawn")
        let addresses = html.replacingOccurrences(of: "xmlns=\"http://www.w3.org/2000/svg\"", with: "")
        #expect(!html.contains("<script"), "nothing to run")
        #expect(!addresses.contains("http://") && !addresses.contains("https://"), "nothing to fetch (beyond the SVG namespace name)")
    }

    @Test func htmlIntoAFolderThatDoesNotExistIsRefusedBeforeAnythingRuns() async {
        let run = await CommandRun.spokes("simulate", "--users", "20", "--time-scale", "1", "--html", "/nonexistent-spokes/report.html")
        #expect(run.status == 2)
        #expect(run.standardError.contains("--html /nonexistent-spokes/report.html: the folder /nonexistent-spokes does not exist"))
        #expect(run.standardOutput.isEmpty, "nothing ran")
    }

    @Test func jsonReportHasTheDocumentedKeys() async throws {
        let run = await CommandRun.spokes("simulate", "--users", "12", "--paths", "4", "--time-scale", "0", "--json")
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let report = try run.json()
        for key in ["users", "completedUsers", "totalPaths", "totalWaitingTime", "bikesBefore", "bikesAfter", "stations", "results"] {
            #expect(report[key] != nil, "missing key \(key)")
        }
        #expect(report["users"] as? Int == 12)
        #expect(report["completedUsers"] as? Int == 12)
        #expect(report["totalPaths"] as? Int == 48)
        #expect(report["bikesBefore"] as? Int == 4_903)
        #expect(report["bikesAfter"] as? Int == 4_903)
        let stations = try #require(report["stations"] as? [[String: Any]])
        #expect(stations.count == 318)
        #expect(Set(stations[0].keys).isSuperset(of: ["id", "name", "freeBikes", "emptySlots"]))
        let results = try #require(report["results"] as? [[String: Any]])
        #expect(results.map { $0["user"] as? Int } == Array(0..<12))
        #expect(Set(results[0].keys).isSuperset(of: ["user", "paths", "waitingTime"]))
    }

    @Test func sameSeedWithOneWorkerPrintsTheSameReport() async throws {
        let arguments = ["simulate", "--stations", "3", "--bikes", "2", "--slots", "1", "--users", "9", "--paths", "5",
                         "--time-scale", "0", "--seed", "42", "--workers", "1", "--json"]
        let first = try await CommandRun.spokes(arguments).json()
        let second = try await CommandRun.spokes(arguments).json()
        #expect(first["results"] as? NSArray == second["results"] as? NSArray)
        #expect(first["seed"] as? Int == 42)
    }

    @Test func syntheticNetworkAndGoal() async throws {
        let run = await CommandRun.spokes(
            "simulate", "--stations", "4", "--bikes", "5", "--slots", "5", "--users", "10", "--paths", "30",
            "--goal", "station-3", "--time-scale", "0", "--seed", "1", "--json")
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let report = try run.json()
        #expect(report["bikesBefore"] as? Int == 20)
        #expect(report["usersReachedGoal"] as? Int == 10)
        #expect((report["totalPaths"] as? Int ?? .max) < 300)
    }

    @Test func readsANetworkFile() async throws {
        let run = try await withTemporaryFile("""
            {"network": {"id": "tiny", "name": "Tiny", "stations": [
              {"id": "a", "name": "A", "latitude": 0, "longitude": 0, "free_bikes": 3, "empty_slots": 1},
              {"id": "b", "name": "B", "latitude": 0, "longitude": 0, "free_bikes": null, "empty_slots": 4}]}}
            """, named: "tiny.json") { path in
            await CommandRun.spokes("simulate", "--network", path, "--users", "3", "--paths", "2", "--time-scale", "0")
        }
        #expect(run.status == 0, "stderr: \(run.standardError)")
        #expect(run.standardOutput.contains("Tiny (tiny): 2 stations, 3 bikes"))
        #expect(run.standardOutput.contains("1 stations had null counts"))
    }

    // MARK: Usage errors: exit 2, naming the flag

    @Test(arguments: [
        (["--users", "-3"], "--users"),
        (["--users", "abc"], "--users"),
        (["--paths", "0"], "--paths"),
        (["--time-scale", "-1"], "--time-scale"),
        (["--move-time", "nan"], "--move-time"),
        (["--users", "99999999999"], "--users"),
        (["--network", "x.json", "--stations", "3"], "--network"),
        (["--stations", "3", "--bikes", "2"], "--slots"),
        (["--bogus"], "--bogus"),
        (["--json=yes"], "--json"),
    ])
    func usageErrorsExitTwoAndNameTheFlag(_ arguments: [String], _ flag: String) async {
        let run = await CommandRun.spokes(["simulate"] + arguments)
        #expect(run.status == 2, "stdout: \(run.standardOutput) stderr: \(run.standardError)")
        #expect(run.standardError.contains(flag), "stderr: \(run.standardError)")
        #expect(run.standardOutput.isEmpty)
    }

    // MARK: Runtime errors: exit 1 with a message a person can act on

    @Test func missingFileIsNamed() async {
        let run = await CommandRun.spokes("simulate", "--network", "/nonexistent/Madrid.json")
        #expect(run.status == 1)
        #expect(run.standardError.contains("file not found: /nonexistent/Madrid.json"))
    }

    @Test func invalidJSONSaysWhere() async throws {
        try await withTemporaryFile("{\"network\": {\"id\": \"x\",\n \"name\": \"X\", \"stations\": [}\n}", named: "x.json") { path in
            let run = await CommandRun.spokes("simulate", "--network", path)
            #expect(run.status == 1)
            #expect(run.standardError.contains("\(path):2:28: invalid JSON"), "stderr: \(run.standardError)")
        }
    }

    @Test func networkWithoutStationsIsRefused() async throws {
        let run = try await withTemporaryFile(#"{"network": {"id": "empty", "name": "Empty", "stations": []}}"#, named: "empty.json") { path in
            await CommandRun.spokes("simulate", "--network", path)
        }
        #expect(run.status == 1)
        #expect(run.standardError.contains("network 'empty' has no stations"))
    }

    @Test func goalOutsideTheNetworkIsRefused() async {
        let run = await CommandRun.spokes("simulate", "--goal", "nowhere")
        #expect(run.status == 1)
        #expect(run.standardError.contains("goal station 'nowhere' is not in network 'bikemi'"))
    }

    @Test func networkWithoutBikesIsRefused() async {
        let run = await CommandRun.spokes("simulate", "--stations", "2", "--bikes", "0", "--slots", "3")
        #expect(run.status == 1)
        #expect(run.standardError.contains("no free bikes"))
    }

    @Test func helpListsEveryFlag() async {
        let run = await CommandRun.spokes("simulate", "--help")
        #expect(run.status == 0)
        for flag in SimulateCommand.spec.options.map(\.name) {
            #expect(run.standardOutput.contains("--\(flag)"), "help lacks --\(flag)")
        }
    }
}
