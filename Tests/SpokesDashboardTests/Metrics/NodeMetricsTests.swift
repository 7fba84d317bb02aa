import SpokesCluster
import Testing
@testable import SpokesDashboard

/// What `GET /metrics` says of a node, from its figures (no node, no socket).
@Suite struct NodeMetricsTests {
    static let figures = NodeMetrics(
        cluster: "lab", node: "n1", build: .init(version: "0.1.0", commit: "5849017a1b2c", protocolVersions: "2"), uptime: 93.25,
        members: ["alive": 3, "dead": 1], slots: TaskBudgets(cpu: 2, waiting: 2000), slotsInUse: TaskBudgets(cpu: 1, waiting: 40),
        taskAttempts: ["bikes.user": TaskAttemptCounts(succeeded: 1000, failed: 3, busy: 7), "math.square": TaskAttemptCounts(succeeded: 200),
                       "bench.noop": TaskAttemptCounts()],
        tasksRetried: 2, jobsRunning: 1, jobsEnded: ["finished": 4, "cancelled": 1],
        rejections: ["frame_too_large": 0, "authentication_failed": 2],
        traffic: TrafficCounters.Counts(bytesSent: 5_000_000, bytesReceived: 4_000_000, framesSent: 9000, framesReceived: 8000),
        raftReplicas: ["leader": 1, "follower": 2], raftCommitLatency: Self.commits, residentMemoryBytes: 31_000_000, cpuSeconds: 12.5)

    /// Three commits: 2 ms, 4 ms and 30 ms.
    static let commits: LatencyHistogram.Snapshot = {
        let histogram = LatencyHistogram(bounds: LatencyHistogram.raftCommitBounds)
        for seconds in [0.002, 0.004, 0.03] { histogram.observe(seconds) }
        return histogram.snapshot
    }()

    @Test func theExpositionPassesTheFormatsRulesAndEveryNameIsSpokes() {
        let checked = ExpositionChecker(Self.figures.text)
        #expect(checked.problems == [])
        #expect(!checked.order.isEmpty)
        for name in checked.order {
            #expect(name.hasPrefix("spokes_"), "\(name)")
            #expect(checked.families[name]?.help?.isEmpty == false, "\(name) has its help")
            let type = checked.families[name]?.type
            #expect(type == "counter" || type == "gauge" || type == "histogram", "\(name) is \(type ?? "untyped")")
            #expect((type == "counter") == name.hasSuffix("_total"), "\(name): counters and only counters end in _total")
            #expect(type != "histogram" || name.hasSuffix("_seconds"), "\(name): histograms of durations are in seconds")
        }
    }

    @Test func everyFigureIsItsSeries() {
        let checked = ExpositionChecker(Self.figures.text)
        #expect(checked.value("spokes_build_info", ["version": "0.1.0", "commit": "5849017a1b2c", "protocol_versions": "2"]) == 1)
        #expect(checked.value("spokes_node_info", ["cluster": "lab", "node": "n1"]) == 1)
        #expect(checked.value("spokes_uptime_seconds") == 93.25)
        #expect(checked.value("spokes_members", ["state": "alive"]) == 3)
        #expect(checked.value("spokes_members", ["state": "dead"]) == 1)
        #expect(checked.value("spokes_slots", ["budget": "cpu"]) == 2)
        #expect(checked.value("spokes_slots", ["budget": "waiting"]) == 2000)
        #expect(checked.value("spokes_slots_in_use", ["budget": "cpu"]) == 1)
        #expect(checked.value("spokes_slots_in_use", ["budget": "waiting"]) == 40)
        #expect(checked.value("spokes_tasks", ["state": "running"]) == 41)
        #expect(checked.value("spokes_task_attempts_total", ["kind": "bikes.user", "outcome": "succeeded"]) == 1000)
        #expect(checked.value("spokes_task_attempts_total", ["kind": "bikes.user", "outcome": "failed"]) == 3)
        #expect(checked.value("spokes_task_attempts_total", ["kind": "bikes.user", "outcome": "busy"]) == 7)
        #expect(checked.value("spokes_task_attempts_total", ["kind": "math.square", "outcome": "succeeded"]) == 200)
        #expect(checked.value("spokes_task_attempts_total", ["kind": "bench.noop", "outcome": "failed"]) == 0, "a kind it runs, zeros included")
        #expect(checked.value("spokes_task_retries_total") == 2)
        #expect(checked.value("spokes_connection_bytes_total", ["direction": "sent"]) == 5_000_000)
        #expect(checked.value("spokes_connection_bytes_total", ["direction": "received"]) == 4_000_000)
        #expect(checked.value("spokes_connection_frames_total", ["direction": "sent"]) == 9000)
        #expect(checked.value("spokes_connection_frames_total", ["direction": "received"]) == 8000)
        #expect(checked.value("spokes_raft_commit_seconds_bucket", ["le": "0.001"]) == 0)
        #expect(checked.value("spokes_raft_commit_seconds_bucket", ["le": "0.0025"]) == 1)
        #expect(checked.value("spokes_raft_commit_seconds_bucket", ["le": "0.005"]) == 2)
        #expect(checked.value("spokes_raft_commit_seconds_bucket", ["le": "0.025"]) == 2)
        #expect(checked.value("spokes_raft_commit_seconds_bucket", ["le": "0.05"]) == 3)
        #expect(checked.value("spokes_raft_commit_seconds_bucket", ["le": "+Inf"]) == 3)
        #expect(checked.value("spokes_raft_commit_seconds_count") == 3)
        #expect(abs((checked.value("spokes_raft_commit_seconds_sum") ?? 0) - 0.036) < 1e-12)
        #expect(checked.value("spokes_jobs", ["state": "running"]) == 1)
        #expect(checked.value("spokes_jobs_ended_total", ["state": "finished"]) == 4)
        #expect(checked.value("spokes_rejections_total", ["kind": "authentication_failed"]) == 2)
        #expect(checked.value("spokes_raft_replicas", ["role": "leader"]) == 1)
        #expect(checked.value("spokes_raft_replicas", ["role": "follower"]) == 2)
        #expect(checked.value("spokes_process_resident_memory_bytes") == 31_000_000)
        #expect(checked.value("spokes_process_cpu_seconds_total") == 12.5)
    }

    @Test func everyStateHasItsSeriesZerosIncludedSoNoneVanishes() {
        let checked = ExpositionChecker(Self.figures.text)
        for state in NodeMetrics.memberStates { #expect(checked.value("spokes_members", ["state": state]) != nil, "\(state)") }
        #expect(checked.value("spokes_members", ["state": "suspect"]) == 0)
        for state in NodeMetrics.jobEndings { #expect(checked.value("spokes_jobs_ended_total", ["state": state]) != nil, "\(state)") }
        #expect(checked.value("spokes_jobs_ended_total", ["state": "failed"]) == 0)
        for role in NodeMetrics.raftRoles { #expect(checked.value("spokes_raft_replicas", ["role": role]) != nil, "\(role)") }
        #expect(checked.value("spokes_rejections_total", ["kind": "frame_too_large"]) == 0)
    }

    @Test func aStateThisBuildDoesNotListStillGetsItsSeries() {
        var figures = Self.figures
        figures.members["draining"] = 2
        #expect(ExpositionChecker(figures.text).value("spokes_members", ["state": "draining"]) == 2)
    }

    @Test func whatCannotBeReadIsLeftOutRatherThanReportedAsZero() {
        var figures = Self.figures
        figures.residentMemoryBytes = nil
        figures.cpuSeconds = nil
        figures.raftReplicas = nil
        figures.raftCommitLatency = nil
        let checked = ExpositionChecker(figures.text)
        #expect(checked.problems == [])
        #expect(checked.families["spokes_raft_commit_seconds"] == nil)
        #expect(checked.families["spokes_process_resident_memory_bytes"] == nil)
        #expect(checked.families["spokes_process_cpu_seconds_total"] == nil)
        #expect(checked.families["spokes_raft_replicas"] == nil)
    }

    @Test func labelValuesFromConfigurationAreEscaped() {
        var figures = Self.figures
        figures.cluster = "lab \"a\"\\b"
        let checked = ExpositionChecker(figures.text)
        #expect(checked.problems == [])
        #expect(checked.value("spokes_node_info", ["cluster": "lab \"a\"\\b", "node": "n1"]) == 1)
    }

    @Test func residentMemoryIsTheSecondFieldOfStatmInPages() {
        #expect(ProcessFigures.residentBytes(statm: "12345 678 90 1 0 234 0\n", pageSize: 4096) == Double(678 * 4096))
        #expect(ProcessFigures.residentBytes(statm: "12345", pageSize: 4096) == nil)
        #expect(ProcessFigures.residentBytes(statm: "1 x 2", pageSize: 4096) == nil)
        #expect(ProcessFigures.residentBytes(statm: "1 2 3", pageSize: 0) == nil)
    }

    @Test func theProcessFiguresAreReadOnLinux() throws {
        // Reading the process's own figures: no clock, no socket, no child process.
        #expect(try #require(ProcessFigures.residentMemoryBytes()) > 1_000_000)
        #expect(try #require(ProcessFigures.cpuSeconds()) >= 0)
    }
}
