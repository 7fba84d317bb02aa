import FoundationEssentials
import Glibc
import SpokesCluster
import SpokesConcurrency

/// `spokes keyring list | install FILE | use ID | remove ID`: changes the cluster's secret
/// while it runs. Asks one node (--to, or the first found by discovery) for its members,
/// then every alive member in turn, and reports who acknowledged.
enum KeyringCommand {
    static let action = Option.string("action", "ACTION", default: "list",
                                      help: "list, install, use or remove (also the first argument).")
    static let key = Option.string("key", "FILE|ID", help: "For install: the new secret's file (mode 600). For use and remove: the secret's fingerprint, as list shows it (also the second argument).")
    static let timeout = Option.number("timeout", "SECONDS", in: 0.1...600, default: 10, help: "How long each member may take to answer.")
    static let json = Option.flag("json", help: "Print each member's answer as JSON lines.")

    static let spec = CommandSpec(
        name: "keyring",
        abstract: "List, install, use or remove the cluster's secrets on every member, while it runs.",
        discussion: """
            A node holds a keyring: one primary secret, which seals everything it sends, and \
            others it still accepts. To change the cluster's secret with nothing stopped: \
            'install NEW.secret' (every member accepts both), 'use ID' (every member seals \
            with the new one), then 'remove OLD-ID' (the old one opens nothing from then on; \
            connections sealed with it are replaced, no call fails). ID is a secret's \
            fingerprint ('spokes keyring list'; 'spokes node' logs its own). Each alive member \
            is asked in turn; the report says who acknowledged and who did not, and why. Exit \
            status 0 when every alive member acknowledged, 1 otherwise. The client gets in \
            with SPOKES_SECRET or secret_file, as every client does: any installed secret \
            will do. A node started later takes its keyring from cluster.yaml (secret_file, \
            accept_secret_files).
            """,
        usage: ["keyring list [--to HOST:PORT]", "keyring install FILE", "keyring use ID", "keyring remove ID"],
        options: [action, key, NodeClient.to, timeout, json] + ClusterOptions.connectionOptions,
        positionals: [action, key])

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        let change = try change(arguments)
        let settings = try ClusterOptions.settings(arguments, environment: context.environment)
        let timeout = try arguments.value(timeout)
        let target = try await NodeClient.target(arguments, settings: settings, timeout: 3)
        let answers = try await NodeClient.withClient(of: target, settings: settings, callTimeout: timeout) { client, node in
            let status = try NodeStatus.resolve(id: ActorID(node: node, name: NodeStatus.wellKnownName), using: client)
            let members = try await status.members().filter { $0.state == "alive" && !$0.address.isEmpty }
            var answers: [(name: String, outcome: Result<KeyringState, any Error>)] = []
            for member in members {
                answers.append((member.name, await ask(member, change, client: client)))
            }
            return answers
        }
        let json = arguments.flag(Self.json.spec.name)
        for (name, outcome) in answers {
            switch outcome {
            case .success(let state) where json:
                context.standardOutput(try Answer(node: name, acknowledged: true, primary: state.primary, installed: state.installed).line())
            case .success(let state):
                context.standardOutput("\(name): primary \(state.primary), installed \(state.installed.joined(separator: " "))\n")
            case .failure(let error) where json:
                context.standardOutput(try Answer(node: name, acknowledged: false, error: "\(error)").line())
            case .failure(let error):
                context.standardError("\(name): did not acknowledge: \(error)\n")
            }
        }
        let failed = answers.filter { if case .failure = $0.outcome { true } else { false } }.count
        if !json {
            context.standardError(failed == 0
                ? "\(answers.count) of \(answers.count) alive members acknowledged\n"
                : "\(answers.count - failed) of \(answers.count) alive members acknowledged; run it again once the others are reachable\n")
        }
        return failed == 0 ? 0 : 1
    }

    /// One member's answer, a JSON line of `--json`.
    struct Answer: Encodable {
        var node: String
        var acknowledged: Bool
        var primary: String?
        var installed: [String]?
        var error: String?

        func line() throws -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return String(decoding: try encoder.encode(self), as: UTF8.self) + "\n"
        }
    }

    /// The change the arguments ask for; a secret's file is read here (mode 600, at least
    /// 16 bytes), and only its text travels, sealed.
    static func change(_ arguments: ParsedArguments) throws -> KeyringChange {
        let key = try arguments.value(key)
        switch try arguments.value(action) {
        case "list":
            guard key == nil else { throw UsageError("keyring list takes no FILE or ID") }
            return .list
        case "install":
            guard let path = key else { throw UsageError("keyring install needs the new secret's FILE") }
            do {
                return .install(secret: try ClusterSecret.read(file: path).revealText())
            } catch {
                throw UsageError("keyring install \(path): \(error)")
            }
        case let verb where verb == "use" || verb == "remove":
            guard let fingerprint = key, fingerprint.count == 8, fingerprint.allSatisfy(\.isHexDigit) else {
                throw UsageError("keyring \(verb) needs a secret's ID: its 8-hex-digit fingerprint, as 'spokes keyring list' shows it")
            }
            return verb == "use" ? .use(fingerprint: fingerprint.lowercased()) : .remove(fingerprint: fingerprint.lowercased())
        case let other:
            throw UsageError("unknown keyring action '\(other)': list, install, use or remove")
        }
    }

    /// Asks one member to make `change`, over a connection of its own.
    private static func ask(_ member: MemberStatus, _ change: KeyringChange, client: ClusterSystem) async -> Result<KeyringState, any Error> {
        do {
            let address = try SocketAddress(parsing: member.address)
            let peer = try await NodeClient.join(address, with: client)
            let status = try NodeStatus.resolve(id: ActorID(node: peer.node, name: NodeStatus.wellKnownName), using: client)
            return .success(try await status.keyring(change))
        } catch {
            return .failure(error)
        }
    }
}
