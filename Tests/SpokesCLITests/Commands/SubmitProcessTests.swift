import SpokesConcurrency
import Foundation
import SpokesCluster
import SpokesTestKit
import Testing
@testable import SpokesCLI

/// `spokes submit` against real `spokes node` processes on loopback.
@Suite(.processLane, .timeLimit(.minutes(3)))
struct SubmitProcessTests {
    let cluster = "jobs-\(UUID().uuidString.prefix(8))"
    let discoveryPort = String(TestPorts.discovery())
    /// This test's files, removed when the test ends.
    let files: TemporaryDirectory
    let smallNetwork: String

    init() throws {
        files = try TemporaryDirectory()
        smallNetwork = try TestFiles.smallNetwork(in: files)
    }

    func flags(_ extra: [String] = []) -> [String] { ["--cluster", cluster, "--discovery-port", discoveryPort] + extra }

    /// `count` nodes `j0`, `j1`, ...; `environment` more variables of some, by number.
    func startNodes(
        _ count: Int, environment: [Int: [String: String]] = [:], extra: (Int) -> [String] = { _ in [] }
    ) async throws -> [NodeProcess] {
        let nodes = try await NodeProcess.start(count) {
            try await NodeProcess(name: "j\($0)", flags: flags(extra($0)), environment: environment[$0] ?? [:])
        }
        let probe = ClusterProcessTests()
        for node in nodes {
            var settings = probe.clientSettings
            settings.cluster = cluster
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                let members = (try? await StatusCommand.fetchMembers(from: node.address, settings: settings, timeout: 2)) ?? []
                if members.count == count, members.allSatisfy({ $0.state == "alive" }) { break }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        return nodes
    }

    func submit(to node: NodeProcess, _ workload: [String]) async -> CommandRun {
        await CommandRun.spokes(["submit", "--to", node.address.description, "--json", "--network",
                                 smallNetwork] + workload + flags())
    }

    /// `spokes submit --json` of a long real-time job as a child process (ended after 60 s
    /// at the latest), with its stdout and stderr.
    func startSubmit(to node: NodeProcess, _ workload: [String]) throws -> (Process, out: Pipe, err: Pipe) {
        guard let executable = SpokesExecutableTests.executable else { throw CocoaError(.fileNoSuchFile) }
        let process = Process()
        process.executableURL = executable
        process.arguments = ["submit", "--to", node.address.description, "--paths", "1000", "--time-scale", "1", "--json",
                             "--network", smallNetwork] + workload + flags()
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try ProcessLaunch.run(process)
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { if process.isRunning { process.terminate() } }
        return (process, out, err)
    }

    func report(_ run: CommandRun) -> [String: Any] {
        (try? run.json()) ?? [:]
    }

    func checkExactlyOnce(_ report: [String: Any], users: Int) {
        let results = report["results"] as? [[String: Any]] ?? []
        #expect(results.compactMap { $0["user"] as? Int } == Array(0..<users), "one result per user")
        let conservation = report["conservation"] as? [String: Any] ?? [:]
        #expect(conservation["holds"] as? Bool == true, "\(conservation)")
        #expect(report["bikesBefore"] as? Int == report["bikesAfter"] as? Int)
    }

    @Test func aJobSubmittedToTheSecondNodeRunsOnAllThree() async throws {
        let nodes = try await startNodes(3) { _ in ["--slots", "2"] }
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        let run = await submit(to: nodes[1], ["--users", "30", "--paths", "4", "--time-scale", "0.05", "--seed", "1"])
        let report = report(run)
        #expect(run.status == 0, "\(run.standardError)")
        checkExactlyOnce(report, users: 30)
        #expect(report["completedUsers"] as? Int == 30)
        let perNode = report["tasksPerNode"] as? [String: Int] ?? [:]
        #expect(Set(perNode.keys) == ["j0", "j1", "j2"], "\(perNode)")
        #expect(perNode.values.reduce(0, +) == 30)
        let results = report["results"] as? [[String: Any]] ?? []
        #expect(results.allSatisfy { $0["node"] is String && $0["attempts"] as? Int == 1 })
        #expect(report["epoch"] as? Int == 0)
    }

    /// Issue 21 §1: a client whose coordinator stops answering (SIGSTOP keeps its sockets
    /// open: only the missing heartbeats tell) says so within seconds, naming the job,
    /// the node and how to fetch the result later, and exits non-zero.
    @Test func aClientWhoseCoordinatorFreezesSaysSoNamingTheJobAndExits() async throws {
        let nodes = try await startNodes(1)
        defer {
            nodes[0].kill(SIGCONT)
            nodes[0].kill(SIGKILL)
        }
        let job = Task { await submit(to: nodes[0], ["--users", "20", "--paths", "30", "--time-scale", "1", "--seed", "3"]) }
        var settings = ClusterProcessTests().clientSettings
        settings.cluster = cluster
        try await eventually("the job runs on j0", within: 10) {
            (try? await StatusCommand.fetchMembers(from: nodes[0].address, settings: settings, timeout: 2).first?.running ?? 0) ?? 0 > 0
        }
        nodes[0].kill(SIGSTOP)
        let frozenAt = ContinuousClock.now
        let run = try await withTimeout(seconds: 20) { await job.value }
        let waited = (ContinuousClock.now - frozenAt).seconds
        #expect(run.status == 1)
        #expect(run.standardError.contains("lost the coordinator of job job-"), "\(run.standardError)")
        #expect(run.standardError.contains("j0 at \(nodes[0].address)") && run.standardError.contains("no answer to heartbeats"), "\(run.standardError)")
        #expect(run.standardError.contains("'spokes result job-"), "\(run.standardError)")
        #expect(waited < 10, "the client said so \(waited) s after the coordinator froze")
    }

    @Test func aWorkerKilledMidJobLosesNoUserAndNoBike() async throws {
        let nodes = try await startNodes(3) { _ in ["--slots", "3"] }
        defer { nodes.forEach { $0.kill(SIGKILL) } }
        // Real time (a user rides for seconds): j2 still has users in flight when it is
        // killed, however late the status poll sees it running on a loaded machine.
        let job = Task { await submit(to: nodes[0], ["--users", "40", "--paths", "8", "--time-scale", "1", "--seed", "2"]) }
        // Kill j2 once it is running users.
        var settings = ClusterProcessTests().clientSettings
        settings.cluster = cluster
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let me = try await StatusCommand.fetchMembers(from: nodes[2].address, settings: settings, timeout: 2).first
            if (me?.running ?? 0) > 0 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        nodes[2].kill(SIGKILL)
        let run = await job.value
        let report = report(run)
        #expect(run.status == 0, "\(run.standardError)")
        checkExactlyOnce(report, users: 40)
        #expect(report["completedUsers"] as? Int == 40)
        #expect((report["retries"] as? Int ?? 0) > 0, "the killed worker's users were retried")
        #expect((report["failedUsers"] as? [Any])?.isEmpty == true)
        #expect(report["epoch"] as? Int == 0, "the coordinator was not lost")
    }

    @Test func aNodeFailingEveryFifthTaskCostsRetriesNotResults() async throws {
        let nodes = try await startNodes(2) { $0 == 1 ? ["--fail-every", "5"] : [] }
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        let run = await submit(to: nodes[0], ["--users", "40", "--paths", "3", "--time-scale", "0.02", "--seed", "3"])
        let report = report(run)
        #expect(run.status == 0, "\(run.standardError)")
        checkExactlyOnce(report, users: 40)
        #expect(report["completedUsers"] as? Int == 40)
        #expect((report["retries"] as? Int ?? 0) > 0)
    }

    @Test func aDeadlineShorterThanASlowNodesDelayMovesItsTasksElsewhere() async throws {
        let nodes = try await startNodes(2) { $0 == 1 ? ["--slow", "3000"] : [] }
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        let run = await submit(to: nodes[0], ["--users", "12", "--paths", "2", "--time-scale", "0", "--seed", "4", "--deadline", "0.5"])
        let report = report(run)
        #expect(run.status == 0, "\(run.standardError)")
        checkExactlyOnce(report, users: 12)
        #expect(report["completedUsers"] as? Int == 12)
        #expect((report["tasksPerNode"] as? [String: Int])?["j1"] == nil, "nothing finished on the slow node")
        #expect((report["retries"] as? Int ?? 0) > 0)
    }

    @Test func twoJobsAtOnceOnDifferentNodesBothFinish() async throws {
        let nodes = try await startNodes(2) { _ in ["--slots", "2"] }
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        async let first = submit(to: nodes[0], ["--users", "20", "--paths", "3", "--time-scale", "0.05", "--seed", "5"])
        async let second = submit(to: nodes[1], ["--users", "20", "--paths", "3", "--time-scale", "0.05", "--seed", "6"])
        let (runA, runB) = await (first, second)
        let reportA = report(runA), reportB = report(runB)
        #expect(runA.status == 0 && runB.status == 0, "\(runA.standardError) \(runB.standardError)")
        checkExactlyOnce(reportA, users: 20)
        checkExactlyOnce(reportB, users: 20)
        #expect(reportA["job"] as? String != reportB["job"] as? String)
    }

    @Test func finishedJobsAreStoredAndTheirReportsCanBeReadAgain() async throws {
        let nodes = try await startNodes(1)
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        let run = await submit(to: nodes[0], ["--users", "5", "--paths", "2", "--time-scale", "0", "--seed", "7"])
        let job = try #require(report(run)["job"] as? String)
        let list = await CommandRun.spokes(["jobs", "--to", nodes[0].address.description, "--json"] + flags())
        #expect(list.status == 0, "\(list.standardError)")
        let jobs = try #require(try list.json()["jobs"] as? [[String: Any]])
        #expect(jobs.contains { $0["job"] as? String == job && $0["completedUsers"] as? Int == 5 })
        let again = await CommandRun.spokes(["result", job, "--to", nodes[0].address.description, "--json"] + flags())
        #expect(again.status == 0, "\(again.standardError)")
        #expect(try again.json()["job"] as? String == job)
        #expect(try again.json()["totalPaths"] as? Int == report(run)["totalPaths"] as? Int)
        let page = files.file("report.html")
        let html = await CommandRun.spokes(["result", job, "--to", nodes[0].address.description, "--html", page] + flags())
        #expect(html.status == 0, "\(html.standardError)")
        #expect(html.standardOutput.contains("Users completed  5 of 5"), "the summary is still printed")
        let written = try String(contentsOfFile: page, encoding: .utf8)
        #expect(written.hasPrefix("<!doctype html>") || written.hasPrefix("<!DOCTYPE html>"))
        #expect(written.contains(job))
        #expect(!written.contains("<script"), "the report needs no script")
        let missing = await CommandRun.spokes(["result", "job-none", "--to", nodes[0].address.description] + flags())
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("no node of the cluster knows job job-none"), "\(missing.standardError)")
    }

    @Test func ctrlCCancelsTheJobOnEveryNodeAndStillReports() async throws {
        let nodes = try await startNodes(2) { _ in ["--waiting-slots", "10"] }
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        let (process, out, err) = try startSubmit(to: nodes[0], ["--users", "40", "--progress"])
        // Once users run on both nodes, interrupt.
        let progress = await readOutput(of: err.fileHandleForReading, until: "j0 10, j1 10")
        #expect(progress.contains("j0 10, j1 10"),
                "progress showed users (waiting tasks) on both nodes, each with its 10 waiting slots taken (less than a round is left for queue places)")
        #expect(progress.hasPrefix("job job-") && progress.contains(" accepted by j0 at "), "the job's id came first: \(progress.prefix(200))")
        kill(process.processIdentifier, SIGINT)
        let data = await runBlocking("test.output") { Data(DescriptorReading.all(of: out.fileHandleForReading.fileDescriptor)) }
        await runBlocking("test.wait") { process.waitUntilExit() }
        #expect(process.terminationStatus == 130)
        let cancelled = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(cancelled["cancelled"] as? Bool == true)
        #expect((cancelled["conservation"] as? [String: Any])?["holds"] as? Bool == true)
        #expect(cancelled["cancelReason"] as? String == "cancelled by the submitter")
        #expect(cancelled["retries"] as? Int == 0, "cancelled attempts are not retries")
        #expect((cancelled["failedUsers"] as? [Any])?.isEmpty == true, "cancelled users are not failed users")
        let cancelledUsers = cancelled["cancelledUsers"] as? [[String: Any]] ?? []
        #expect(cancelledUsers.count == 40 - (cancelled["completedUsers"] as? Int ?? 0) && !cancelledUsers.isEmpty)
        let text = String(decoding: data, as: UTF8.self)
        #expect(!text.contains("CancellationError") && text.contains("cancelled by the submitter while it ran"))
        // Every node stops running the job's users.
        var settings = ClusterProcessTests().clientSettings
        settings.cluster = cluster
        for node in nodes {
            let deadline = ContinuousClock.now + .seconds(10)
            var running = -1
            while ContinuousClock.now < deadline {
                running = try await StatusCommand.fetchMembers(from: node.address, settings: settings, timeout: 2).first?.running ?? -1
                if running == 0 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(running == 0, "\(node.name) still runs \(running) tasks")
        }
    }

    @Test func aJobWhoseClientIsKilledRunsOnAndCanBeCancelledFromAnotherClient() async throws {
        let nodes = try await startNodes(2) { _ in ["--slots", "2"] }
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        let (process, _, err) = try startSubmit(to: nodes[0], ["--users", "30"])
        // The id comes as soon as the job is accepted, long before it could end.
        let accepted = await readOutput(of: err.fileHandleForReading, until: "\n")
        let words = accepted.split(separator: " ")
        #expect(words.count > 4 && words[0] == "job" && words[2] == "accepted", "\(accepted)")
        let job = words.count > 1 ? String(words[1]) : "?"
        #expect(accepted.contains("spokes cancel \(job) --to \(nodes[0].address)"))
        kill(process.processIdentifier, SIGKILL)
        await runBlocking("test.wait") { process.waitUntilExit() }

        let list = await CommandRun.spokes(["jobs", "--to", nodes[0].address.description, "--json"] + flags())
        let running = (try? list.json()["jobs"] as? [[String: Any]])?.first { $0["job"] as? String == job }
        #expect(running?["state"] as? String == "running", "the job runs on without its client: \(list.standardOutput)")
        // Asked through the node that does not coordinate it.
        let cancel = await CommandRun.spokes(["cancel", job, "--to", nodes[1].address.description] + flags())
        #expect(cancel.status == 0, "\(cancel.standardError)")
        #expect(cancel.standardOutput.hasPrefix("cancelled job \(job) on j0 at \(nodes[0].address): "), "\(cancel.standardOutput)")
        #expect(cancel.standardOutput.contains("its report is stored: spokes result \(job) --to \(nodes[0].address)"))

        let result = await CommandRun.spokes(["result", job, "--to", nodes[0].address.description, "--json"] + flags())
        #expect(result.status == 0, "\(result.standardError)")
        let report = (try? result.json()) ?? [:]
        #expect(report["cancelled"] as? Bool == true)
        #expect(report["cancelReason"] as? String == "cancelled with 'spokes cancel'")
        #expect(report["stored"] as? Bool == true)
        #expect((report["conservation"] as? [String: Any])?["holds"] as? Bool == true)
        let table = await CommandRun.spokes(["jobs", "--to", nodes[0].address.description] + flags())
        #expect(table.standardOutput.split(separator: "\n").contains { $0.hasPrefix(job) && $0.contains(" cancelled ") }, "\(table.standardOutput)")
        var settings = ClusterProcessTests().clientSettings
        settings.cluster = cluster
        for node in nodes {
            #expect(try await StatusCommand.fetchMembers(from: node.address, settings: settings, timeout: 2).first?.running == 0,
                    "\(node.name) stopped the job's users")
        }
        let again = await CommandRun.spokes(["cancel", job, "--to", nodes[0].address.description] + flags())
        #expect(again.status == 1)
        #expect(again.standardError.contains("no node of the cluster runs job \(job)"))
    }

    @Test func aReportTheCoordinatorCannotStoreIsSaidSoAndFailsTheExitStatus() async throws {
        // The job store's file is a folder: the job runs (its replicas are kept beside it,
        // in raft/), and only its report cannot be stored.
        let data = files.file("data")
        try FileManager.default.createDirectory(atPath: data + "/jobs.jsonl", withIntermediateDirectories: true)
        let node = try await NodeProcess(name: "j0", flags: flags(), environment: ["SPOKES_DATA_DIRECTORY": data])
        defer { node.kill(SIGTERM) }
        let run = await submit(to: node, ["--users", "5", "--paths", "2", "--time-scale", "0", "--seed", "8"])
        let report = report(run)
        #expect(run.status == 1)
        #expect(report["completedUsers"] as? Int == 5, "the report itself is whole")
        #expect(report["stored"] as? Bool == false)
        let storeError = report["storeError"] as? String ?? ""
        #expect(storeError.contains("jobs.jsonl"), "\(storeError)")
        #expect(run.standardError.contains("warning: the coordinator could not store job \(report["job"] as? String ?? "?"): \(storeError)"),
                "\(run.standardError)")
    }

    /// Issue 19 §2: a job is accepted only once it is on disk. A node whose data directory
    /// cannot be made refuses it before anything runs, naming the node and the path.
    @Test func aNodeThatCannotKeepAJobOnDiskRefusesIt() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("spokes-not-a-folder-\(UUID().uuidString)").path
        try Data().write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let node = try await NodeProcess(name: "j0", flags: flags(), environment: ["SPOKES_DATA_DIRECTORY": file + "/data"])
        defer { node.kill(SIGTERM) }
        let run = await submit(to: node, ["--users", "5", "--paths", "2", "--time-scale", "0", "--seed", "8"])
        #expect(run.status == 1)
        #expect(run.standardOutput.isEmpty)
        #expect(run.standardError.contains("j0 refused the job") && run.standardError.contains(file), "\(run.standardError)")
    }

    @Test func withoutRetriesAFailingNodeShowsFailedUsersAndNoRetries() async throws {
        let nodes = try await startNodes(2) { $0 == 1 ? ["--fail-every", "5"] : [] }
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        let run = await CommandRun.spokes(["submit", "--to", nodes[0].address.description, "--network", smallNetwork, "--retries", "0",
                                           "--users", "40", "--paths", "3", "--time-scale", "0.02", "--seed", "3"] + flags())
        #expect(run.status == 1, "not every user completed")
        let lines = run.standardOutput.split(separator: "\n")
        #expect(lines.contains("Retries          0"), "\(run.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("Failed users     ") })
        let reasons = lines.filter { $0.hasPrefix("  user ") }
        #expect(!reasons.isEmpty && reasons.allSatisfy { $0.contains(": attempt 1 on j1: injected failure on j1 (every Nth task fails), task ") }, "\(reasons)")
    }

    @Test func badJobParametersAreRefusedBeforeAnythingRuns() async throws {
        let nodes = try await startNodes(1)
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        let usage = await CommandRun.spokes(["submit", "--to", nodes[0].address.description, "--users", "0"] + flags())
        #expect(usage.status == 2)
        #expect(usage.standardError.contains("--users"))
        let goal = await CommandRun.spokes(["submit", "--to", nodes[0].address.description, "--goal", "nowhere"] + flags())
        #expect(goal.status == 1)
        #expect(goal.standardError.contains("goal station 'nowhere'"))
        let large = await CommandRun.spokes(["submit", "--to", nodes[0].address.description, "--users", "30000", "--time-scale", "0"] + flags())
        #expect(large.status == 1)
        #expect(large.standardError == "error: j0 refused the job: the job has 30000 users; this node accepts at most 20000 (limits.max_users in its cluster.yaml)\n",
                "the node's words, not its error's type")
        var settings = ClusterProcessTests().clientSettings
        settings.cluster = cluster
        #expect(try await StatusCommand.fetchMembers(from: nodes[0].address, settings: settings, timeout: 2).first?.completed == 0)
    }
    /// The id of the bike job running on the cluster of `node` once `done` of its users
    /// ended (as `spokes jobs` lists it). The jobs these tests kill run for several
    /// seconds, so a poll slowed by a loaded machine still sees them running.
    func runningBikeJob(at node: NodeProcess, usersDone done: Int) async throws -> String {
        try await runningJob(at: node.address.description, flags: flags(), done: done, within: 20, "a bike job") {
            ($0["job"] as? String ?? "").hasPrefix("job-")
        }
    }

    /// Issue 19 §1 and §4, for bike jobs: three nodes; the coordinator of a real-time
    /// bike job is killed (-9) mid-job and stays dead. The job's replicas elect another
    /// leader, which runs on from the committed book (stations and users); the client
    /// follows the job there and exits 0 with every user once and every bike accounted
    /// for; `result --wait` from another node prints the same report.
    @Test func aBikeJobWhoseCoordinatorIsKilledIsTakenOverAndCountsEveryUserOnce() async throws {
        let nodes = try await startNodes(3) { _ in ["--slots", "3"] }
        defer { nodes.forEach { $0.kill(SIGKILL) } }
        let submitted = Task { await submit(to: nodes[0], ["--users", "30", "--paths", "24", "--time-scale", "1", "--seed", "5"]) }
        // Killed once j0 says the job has run 1.5 s (an event seen on the node, not a sleep):
        // a report counted from the job's start then holds those 1.5 s, one counted from
        // the take-over does not.
        let job = try await runningJob(at: nodes[1].address.description, flags: flags(), done: 0, within: 30, "a bike job that ran 1.5 s") {
            ($0["job"] as? String ?? "").hasPrefix("job-") && ($0["wallTime"] as? Double ?? 0) >= 1.5
        }
        nodes[0].kill(SIGKILL)
        let killed = ContinuousClock.now
        let run = await submitted.value
        let sinceKill = (ContinuousClock.now - killed).seconds
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.contains("lost the coordinator of job \(job), j0") && run.standardError.contains("looking for the member that took the job over"),
                "\(run.standardError)")
        let report = report(run)
        // A take-over begins at least an election timeout (0.6 s) after the kill: a wall
        // time counted from it is below `sinceKill - 0.6`. One counted from the job's start
        // on j0 holds the 1.5 s it ran before the kill, less at most the client's follow
        // (a question every 0.5 s) between the report and its exit.
        #expect((report["wallTime"] as? Double ?? 0) > sinceKill + 0.5,
                "the wall time counts from the job's start on j0, not from the take-over: \(report["wallTime"] ?? "none") s, \(sinceKill) s since the kill")
        checkExactlyOnce(report, users: 30)
        #expect(report["completedUsers"] as? Int == 30)
        #expect(report["job"] as? String == job)
        let again = await CommandRun.spokes(["result", job, "--to", nodes[2].address.description, "--wait", "--json"] + flags())
        #expect(again.status == 0, "\(again.standardError)")
        #expect((try? again.json()["results"] as? [[String: Any]])?.count == 30)
        for node in nodes.dropFirst() {
            let raft = node.raftDirectory
            try await eventually("\(node.name) removed the finished job's group", within: 25) {
                (try? FileManager.default.contentsOfDirectory(atPath: raft))?.allSatisfy { !$0.hasPrefix("bikejob-") && !$0.hasPrefix("bikeshard-") } ?? false
            }
        }
    }

    /// Issue 19 §1 and §2, for bike jobs of a lone node: the job is on its disk (a group
    /// of one); the node is killed (-9) mid-job, the client says so and exits; started
    /// again on its data directory, the node runs the users that had not ended, and
    /// `result --wait` prints every user once with every bike accounted for.
    @Test func aLoneNodesBikeJobRunsOnWhenTheNodeStartsAgain() async throws {
        let environment = ["SPOKES_DATA_DIRECTORY": files.file("lone")]
        let node = try await NodeProcess(name: "j0", flags: flags(["--slots", "3"]), environment: environment)
        defer { node.kill(SIGKILL) }
        let submitted = Task { await submit(to: node, ["--users", "30", "--paths", "24", "--time-scale", "1", "--seed", "7"]) }
        let job = try await runningBikeJob(at: node, usersDone: 0)
        node.kill(SIGKILL)
        let lost = await submitted.value
        #expect(lost.status == 1 && lost.standardError.contains("lost the coordinator of job \(job)"), "\(lost.standardError)")
        let again = try await NodeProcess(name: "j0", flags: flags(["--slots", "3"]), environment: environment)
        defer { again.kill(SIGKILL) }
        let result = await CommandRun.spokes(["result", job, "--to", again.address.description, "--wait", "--json"] + flags())
        #expect(result.status == 0, "\(result.standardError)")
        checkExactlyOnce(report(result), users: 30)
        #expect(report(result)["completedUsers"] as? Int == 30)
    }

    /// Issue 19 §2, for bike jobs: every node of a 3-node cluster is killed (-9) mid-job
    /// and started again on its data directory. The job's replicas reopen its group, elect
    /// a leader that takes it over from the committed book, and `result --wait` prints
    /// every user once with every bike accounted for; a job that had finished before is
    /// still there.
    @Test func aBikeJobRunsOnWhenTheWholeClusterIsKilledAndStartedAgain() async throws {
        func start(_ index: Int) async throws -> NodeProcess {
            try await NodeProcess(name: "j\(index)", flags: flags(["--slots", "3"]), environment: ["SPOKES_DATA_DIRECTORY": files.file("whole\(index)")])
        }
        var nodes: [NodeProcess] = []
        for index in 0..<3 { nodes.append(try await start(index)) }
        defer { nodes.forEach { $0.kill(SIGKILL) } }
        try await eventually("three alive members", within: 15, every: .milliseconds(50)) {
            let listed = await CommandRun.spokes(["status", "--to", nodes[0].address.description, "--json"] + flags())
            return ((try? listed.json()["members"] as? [[String: Any]]) ?? []).count { $0["state"] as? String == "alive" } == 3
        }
        let earlier = await submit(to: nodes[1], ["--users", "5", "--paths", "2", "--time-scale", "0", "--seed", "9"])
        #expect(earlier.status == 0, "\(earlier.standardError)")
        let finished = try #require(report(earlier)["job"] as? String)
        let coordinator = nodes[0]
        let submitted = Task { await submit(to: coordinator, ["--users", "30", "--paths", "24", "--time-scale", "1", "--seed", "8"]) }
        let job = try await runningBikeJob(at: coordinator, usersDone: 0)
        for node in nodes { node.kill(SIGKILL) }
        _ = await submitted.value
        for node in nodes { _ = await node.waitForExit() }
        nodes = []
        for index in 0..<3 { nodes.append(try await start(index)) }
        let result = await CommandRun.spokes(["result", job, "--to", nodes[2].address.description, "--wait", "--json"] + flags())
        #expect(result.status == 0, "\(result.standardError)")
        checkExactlyOnce(report(result), users: 30)
        #expect(report(result)["completedUsers"] as? Int == 30)
        let again = await CommandRun.spokes(["result", finished, "--to", nodes[0].address.description, "--json"] + flags())
        #expect(again.status == 0 && report(again)["completedUsers"] as? Int == 5, "the job finished before the restart: \(again.standardError)")
    }

    /// Issue 19 §3, for bike jobs: the coordinator is paused (SIGSTOP) far longer than
    /// `dead_after`; another replica takes the job over and finishes it, and the client
    /// follows it there. When the old coordinator wakes, its term is old: it can commit
    /// nothing, so its run stops and it stores no report; it learns the job finished and
    /// drops its replica.
    @Test func aPausedCoordinatorThatWasReplacedStoresNothingWhenItWakes() async throws {
        let nodes = try await startNodes(3) { _ in ["--slots", "3"] }
        defer {
            nodes[0].kill(SIGCONT)
            nodes.forEach { $0.kill(SIGKILL) }
        }
        let submitted = Task { await submit(to: nodes[0], ["--users", "30", "--paths", "24", "--time-scale", "1", "--seed", "6"]) }
        let job = try await runningBikeJob(at: nodes[1], usersDone: 0)
        nodes[0].kill(SIGSTOP)
        let run = await submitted.value
        nodes[0].kill(SIGCONT)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.contains("looking for the member that took the job over"), "\(run.standardError)")
        let report = report(run)
        checkExactlyOnce(report, users: 30)
        #expect(report["completedUsers"] as? Int == 30)
        // The woken node drops its replica once it hears the job finished (from the
        // leader, or by asking a replica that removed it) ...
        let raft = nodes[0].raftDirectory
        try await eventually("j0 dropped the finished job's group", within: 40, every: .milliseconds(100)) {
            (try? FileManager.default.contentsOfDirectory(atPath: raft))?.allSatisfy { !$0.hasPrefix("bikejob-") } ?? false
        }
        // ... and stored no report of it: the result came from the node that took it over.
        let stored = await CommandRun.spokes(["result", job, "--data-directory", nodes[0].dataDirectory.path])
        #expect(stored.status != 0, "j0 stored a report of a job it had lost: \(stored.standardOutput)")
    }

}

/// Small network files for process tests.
enum TestFiles {
    /// Eight Milano-like stations (contended, 4 bikes short of 40 users), written into `folder`.
    static func smallNetwork(in folder: TemporaryDirectory) throws -> String {
        let json = """
        {"network": {"id": "small", "name": "Small", "stations": [
        \((0..<8).map { #"{"id": "s\#($0)", "name": "S\#($0)", "latitude": 45.4, "longitude": 9.1, "free_bikes": \#(2 + $0 % 4), "empty_slots": \#(3 + $0 % 3)}"# }.joined(separator: ",\n"))
        ]}}
        """
        return try folder.write(json, to: "small.json")
    }
}
