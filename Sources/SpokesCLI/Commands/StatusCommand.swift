import FoundationEssentials
import SpokesCluster
import SpokesConcurrency

/// `spokes status`: asks a node for its member list, then every alive member for its own
/// figures, and adds them up.
enum StatusCommand {
    static let timeout = Option.number("timeout", "SECONDS", in: 0.1...600, default: 3,
                                       help: "How long to look for a node, and to wait for each node's answer.")
    static let json = Option.flag("json", help: "Print {\"members\": [...], \"total\": {...}, \"rejected\": {...}, \"protocolVersion\": 4} as JSON: the members with their figures (both slot budgets: slots and slotsInUse, waitingSlots and waitingSlotsInUse; the protocol versions each speaks), the cluster's sums, what the node turned away by kind, and the protocol version every alive member speaks.")

    static let spec = CommandSpec(
        name: "status",
        abstract: "Show the members of a cluster, each with its slots (cpu and waiting, in use / total) and tasks, and the cluster's total.",
        discussion: """
            Asks the node at --to, or without it the first node of the cluster heard by \
            discovery on this machine, for its members: itself first, then every node it knows. \
            Then asks every alive member, at once and each for at most --timeout seconds, for \
            its own figures (cpu slots and waiting slots in use, tasks completed, uptime), and \
            adds a total line. CPU is cpu slots in use / cpu slots (cpu tasks: they compute); \
            WAITING is waiting slots in use / waiting slots (waiting tasks: they mostly sleep \
            or await calls, such as real-time bike users). Also \
            says where the first node serves its dashboard, with the token when you hold the secret.
            """,
        options: [NodeClient.to, timeout, json] + ClusterOptions.connectionOptions)

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        let settings = try ClusterOptions.settings(arguments, environment: context.environment)
        let timeout = try arguments.value(timeout)
        let target = try await NodeClient.target(arguments, settings: settings, timeout: timeout)
        let report = try await fetchReport(from: target, settings: settings, timeout: timeout)
        if try arguments.value(json) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            context.standardOutput(String(decoding: try encoder.encode(report), as: UTF8.self) + "\n")
        } else {
            context.standardOutput(table(report))
            for (name, reason) in report.unanswered.sorted(by: { $0.key < $1.key }) {
                context.standardOutput("\(name) did not answer: \(reason)\n")
            }
            if let me = report.members.first, let dashboard = me.dashboard {
                let token = settings.secret.map { "?token=\($0.dashboardToken)" } ?? ""
                context.standardOutput("dashboard of \(me.name): \(dashboard)\(token)\n")
            }
            if let line = report.protocolLine { context.standardOutput(line + "\n") }
            let rejected = report.rejected.values.reduce(0, +)
            if rejected > 0 { context.standardOutput("rejected: \(rejected) inputs turned away (--json shows them by kind)\n") }
        }
        return 0
    }

    /// What `status --json` prints.
    struct Report: Codable {
        var members: [MemberStatus]
        /// The sums over alive members that answered.
        var total: Total
        /// Alive members that did not answer in time, with why.
        var unanswered: [String: String]
        var rejected: [String: Int]
        /// The highest wire protocol version every alive member speaks: what the cluster
        /// uses for behaviour every member must understand (nil when they share none).
        var protocolVersion: Int?

        init(members: [MemberStatus], total: Total, unanswered: [String: String], rejected: [String: Int]) {
            self.members = members
            self.total = total
            self.unanswered = unanswered
            self.rejected = rejected
            protocolVersion = ProtocolVersions.common(members.filter { $0.state == Member.State.alive.rawValue }.map(\.speaks))
        }

        /// Which members hold the cluster at an older protocol version (a rolling upgrade
        /// under way), or that the alive members share none; nil when every alive member
        /// speaks the newest version any of them speaks.
        var protocolLine: String? {
            let alive = members.filter { $0.state == Member.State.alive.rawValue }
            let newest = alive.map(\.speaks.highest).max() ?? 0
            guard let version = protocolVersion else {
                return "protocol: the alive members share no version (" + alive.map { "\($0.name) \($0.speaks)" }.joined(separator: ", ") + ")"
            }
            let behind = alive.filter { $0.speaks.highest < newest }.map(\.name)
            guard !behind.isEmpty else { return nil }
            let verb = behind.count == 1 ? "speaks" : "speak"
            return "protocol: \(version) until \(behind.joined(separator: ", ")) \(verb) \(newest) (a rolling upgrade under way?)"
        }
    }

    /// The cluster's figures: alive members, and their budgets and tasks added up.
    struct Total: Codable, Equatable {
        var alive: Int
        var members: Int
        var slots: Int
        var slotsInUse: Int
        var waitingSlots: Int
        var waitingSlotsInUse: Int
        var running: Int
        var completed: Int

        init(_ members: [MemberStatus]) {
            let alive = members.filter { $0.state == Member.State.alive.rawValue }
            self.alive = alive.count
            self.members = members.count
            slots = alive.reduce(0) { $0 + $1.slots }
            slotsInUse = alive.reduce(0) { $0 + ($1.slotsInUse ?? 0) }
            waitingSlots = alive.reduce(0) { $0 + $1.waitingSlots }
            waitingSlotsInUse = alive.reduce(0) { $0 + ($1.waitingSlotsInUse ?? 0) }
            running = alive.reduce(0) { $0 + ($1.running ?? 0) }
            completed = alive.reduce(0) { $0 + ($1.completed ?? 0) }
        }
    }

    /// The node's member list, each alive member's own figures (asked concurrently, each
    /// within `timeout`), and the total.
    static func fetchReport(from address: SocketAddress, settings: ClusterSettings, timeout: Double) async throws -> Report {
        try await NodeClient.withClient(of: address, settings: settings, callTimeout: timeout) { client, node in
            let status = try NodeStatus.resolve(id: ActorID(node: node, name: NodeStatus.wellKnownName), using: client)
            var members = try await status.members()
            let rejected = try await status.rejected()
            let answers = await figures(of: members.dropFirst().filter { $0.state == Member.State.alive.rawValue }, client: client, timeout: timeout)
            var unanswered: [String: String] = [:]
            for index in members.indices.dropFirst() {
                switch answers[members[index].name] {
                case .success(let own)?:
                    members[index].running = own.running
                    members[index].slotsInUse = own.slotsInUse
                    members[index].waitingSlotsInUse = own.waitingSlotsInUse
                    members[index].completed = own.completed
                    members[index].uptime = own.uptime
                case .failure(let reason)?:
                    unanswered[members[index].name] = reason.description
                case nil:
                    break
                }
            }
            return Report(members: members, total: Total(members), unanswered: unanswered, rejected: rejected)
        }
    }

    /// Why a member's own figures are missing.
    struct NoAnswer: Error, CustomStringConvertible {
        var description: String
    }

    /// Each member's own status line, asked through `client` at once, each within `timeout`.
    static func figures(of members: [MemberStatus], client: ClusterSystem, timeout: Double) async -> [String: Result<MemberStatus, NoAnswer>] {
        await withTaskGroup(of: (String, Result<MemberStatus, NoAnswer>).self) { group in
            for member in members {
                group.addTask {
                    do {
                        let own = try await withTimeout(seconds: timeout) {
                            let address = try SocketAddress(parsing: member.address)
                            let peer = try await NodeClient.join(address, with: client)
                            let status = try NodeStatus.resolve(id: ActorID(node: peer.node, name: NodeStatus.wellKnownName), using: client)
                            return try await status.members().first
                        }
                        guard let own, own.name == member.name else { return (member.name, .failure(NoAnswer(description: "another node answers at \(member.address)"))) }
                        return (member.name, .success(own))
                    } catch is TimeoutError {
                        return (member.name, .failure(NoAnswer(description: "no answer within \(timeout.compactDescription) s")))
                    } catch {
                        return (member.name, .failure(NoAnswer(description: "\(error)")))
                    }
                }
            }
            var answers: [String: Result<MemberStatus, NoAnswer>] = [:]
            for await (name, answer) in group { answers[name] = answer }
            return answers
        }
    }

    static func fetchMembers(from address: SocketAddress, settings: ClusterSettings, timeout: Double) async throws -> [MemberStatus] {
        try await NodeClient.withClient(of: address, settings: settings, callTimeout: timeout) { client, node in
            try await NodeStatus.resolve(id: ActorID(node: node, name: NodeStatus.wellKnownName), using: client).members()
        }
    }

    /// The members, one line each, and the cluster's total.
    static func table(_ report: Report) -> String {
        let total = report.total
        /// `used/total`, `-/total` when the use is not known.
        func budget(_ used: Int?, _ total: Int) -> String { "\(used.map(String.init) ?? "-")/\(total)" }
        return NodeClient.table(
            ["NAME", "ADDRESS", "STATE", "CPU", "WAITING", "COMPLETED", "UPTIME"],
            report.members.map { member in
                [member.name, member.address, member.state, budget(member.slotsInUse, member.slots),
                 budget(member.waitingSlotsInUse, member.waitingSlots), member.completed.map(String.init) ?? "-",
                 member.uptime.map { String(printf: "%.0fs", $0) } ?? "-"]
            } + [["total", "\(total.alive) of \(total.members) alive", "", budget(total.slotsInUse, total.slots),
                  budget(total.waitingSlotsInUse, total.waitingSlots), "\(total.completed)", ""]])
    }
}
