import FoundationEssentials
import SpokesCluster

/// `spokes doctor`: from one machine, whether every member's ports answer, and what a
/// firewall blocks where one does not (``ClusterDoctor``).
enum DoctorCommand {
    static let timeout = Option.number("timeout", "SECONDS", in: 0.1...60, default: 2,
                                       help: "How long each check (and looking for a node) waits for an answer.")
    static let json = Option.flag("json", help: "Print {\"askedNode\", \"checks\": [{\"member\", \"port\", \"address\", \"status\": ok|failed|skipped, \"detail\"}], \"failed\"} as JSON.")

    static let spec = CommandSpec(
        name: "doctor",
        abstract: "Check from this machine that every member's ports answer, and name what a firewall blocks.",
        discussion: """
            Joins the node at --to (or the first found by discovery) as a client, with the \
            cluster's secret where there is one, takes its member list, and checks every \
            member at once (those that left are not listed): its cluster TCP port (a handshake), the same port number over UDP \
            (a probe, as members probe each other), the discovery UDP port (its beacon heard \
            here; where discovery is on) and its dashboard's TCP port (GET /metrics with the \
            dashboard token; where it serves one). Each check waits at most --timeout \
            seconds. Prints one line per member and port: ok, FAILED with the likely cause \
            (no answer on UDP 7000: a firewall may drop UDP 7000), or SKIPPED with why. \
            Exit status 1 when a check failed or no node could be asked.
            """,
        options: [NodeClient.to, timeout, json] + ClusterOptions.connectionOptions)

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        let settings = try ClusterOptions.settings(arguments, environment: context.environment)
        let timeout = try arguments.value(timeout)
        let entry = try await NodeClient.target(arguments, settings: settings, timeout: timeout)
        let client = try NodeClient.makeClient(settings: settings, callTimeout: timeout)
        defer { client.shutdown() }
        let report = try await ClusterDoctor(settings: settings, timeout: timeout, runtime: .real).examine(entry: entry, client: client)
        context.standardOutput(try arguments.value(json) ? report.json : report.text)
        return report.exitStatus
    }
}
