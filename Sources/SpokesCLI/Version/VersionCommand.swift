import FoundationEssentials

/// `spokes version`: the release version, the protocol versions this build speaks, the
/// commit it was built from and its platform (``SpokesVersion``).
enum VersionCommand {
    static let json = Option.flag("json", help: "Print one JSON object: version, protocolVersions, commit, platform.")

    static let spec = CommandSpec(
        name: "version",
        abstract: "Print the version, the protocol versions this build speaks and the commit it was built from.",
        discussion: """
            Nodes talk when their protocol versions meet, and use the highest both speak. \
            Each release speaks its own protocol and the one before, so a cluster is upgraded \
            one node at a time, one release at a time (README, "Upgrades"). The commit is 'unknown' unless the binary \
            was made by Scripts/package.
            """,
        options: [json])

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        context.standardOutput(try arguments.value(json) ? jsonText : text)
        return 0
    }

    /// What a build says when it does not know its commit.
    static let unknown = "unknown"

    /// The lines `spokes version` prints.
    static var text: String {
        """
        spokes    \(SpokesVersion.release)
        protocol  \(SpokesVersion.protocolDescription)
        commit    \(SpokesVersion.commit ?? unknown)
        platform  \(SpokesVersion.platform)

        """
    }

    /// The object `spokes version --json` prints, on one line.
    static var jsonText: String {
        struct Body: Encodable {
            var version: String
            var protocolVersions: [Int]
            var commit: String
            var platform: String
        }
        let body = Body(version: SpokesVersion.release, protocolVersions: Array(SpokesVersion.protocolVersions),
                        commit: SpokesVersion.commit ?? unknown, platform: SpokesVersion.platform)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(body)) ?? Data("{}".utf8), as: UTF8.self) + "\n"
    }
}
