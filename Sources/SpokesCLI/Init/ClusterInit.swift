import FoundationEssentials
import SpokesCluster
import SpokesConcurrency

/// What `spokes init` writes and prints, as values: pure, so its tests need no machine's
/// interfaces and no files (``InitCommand`` is the shell that writes them).
public struct ClusterInit: Sendable, Hashable {
    /// The cluster's name.
    public var cluster: String
    /// This machine's LAN address and the LAN's broadcast address.
    public var lan: LANAddress.Choice
    /// The cluster port every node listens on (TCP, and UDP for probes).
    public var port: Int
    /// The dashboard's port on every node, or nil for none.
    public var dashboardPort: Int?
    /// The absolute folder the two files go in, the same on every machine.
    public var directory: String

    /// The name of the secret file, beside cluster.yaml (and so relative to it).
    public static let secretName = "secret"
    /// The name of the settings file.
    public static let settingsName = "cluster.yaml"
    /// The port a cluster made by `spokes init` listens on unless told otherwise.
    public static let defaultPort = 7000

    public init(cluster: String, lan: LANAddress.Choice, port: Int = ClusterInit.defaultPort, dashboardPort: Int? = nil, directory: String) {
        self.cluster = cluster
        self.lan = lan
        self.port = port
        self.dashboardPort = dashboardPort
        self.directory = directory
    }

    public var settingsPath: String { DiskPath.join(directory, Self.settingsName) }
    public var secretPath: String { DiskPath.join(directory, Self.secretName) }

    /// `lab-3f9a2c`: a cluster name unlikely to be taken on the LAN already.
    public static func randomName() -> String {
        "lab-" + String(UInt32.random(in: 0..<0x100_0000), radix: 16).leftPadded(to: 6)
    }

    /// Throws unless `name` is a plain cluster name: letters, digits, `.`, `_`, `-`, at most 64.
    public static func checkName(_ name: String) throws(UsageError) {
        guard !name.isEmpty, name.count <= 64, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else {
            throw UsageError("--cluster must be 1 to 64 letters, digits, '.', '_' or '-', got '\(name)'")
        }
    }

    /// The one command every machine runs, this one included. The node is named after the
    /// machine (`"$(hostname)"`, which each machine's shell fills in): a node keeps its job
    /// records and replicas under its name, so it must come back with the same one after a
    /// restart or an upgrade; an unnamed node takes a new random name at every start.
    public var nodeCommand: String {
        "spokes node --config \(shellQuoted(settingsPath)) --host lan" + (dashboardPort == nil ? "" : " --dashboard-host lan")
            + " --name \"$(hostname)\""
    }

    /// cluster.yaml: only what differs from the defaults.
    public var settingsText: String {
        var lines = [
            "# Written by 'spokes init' for cluster '\(cluster)'. Every machine of the cluster",
            "# uses this file and the secret file beside it, in the same folder, and runs",
            "#   \(nodeCommand)",
            "# (--host lan: the machine's own address on the LAN whose broadcast address is",
            "# below). Every other setting, with its default and range, is in the cluster.yaml",
            "# of the Spokes repository or tarball; add here what you change.",
            Self.line("cluster: \(cluster)", "nodes only talk to nodes with the same cluster name"),
            "node:",
            Self.line("  host: \(lan.address)", "the machine 'spokes init' ran on; the others: --host lan"),
            Self.line("  port: \(port)", "TCP and UDP, on every machine"),
            "discovery:",
            Self.line("  mode: lan", nil),
            Self.line("  broadcast: \(lan.broadcast)", "the LAN's broadcast address"),
            Self.line("secret_file: \(Self.secretName)", "beside this file; mode 600, owned by the user running the node"),
        ]
        if let dashboardPort {
            lines += [
                "dashboard:",
                Self.line("  port: \(dashboardPort)", "the dashboard and GET /metrics; the token: 'spokes status'"),
                Self.line("  host: \(lan.address)", "the machine 'spokes init' ran on; the others: --dashboard-host lan"),
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `key: value` with its comment at column 31, as the repository's cluster.yaml has them.
    private static func line(_ setting: String, _ comment: String?) -> String {
        guard let comment else { return setting }
        return setting + String(repeating: " ", count: max(1, 30 - setting.count)) + "# " + comment
    }

    /// What `spokes init` prints once the files are written.
    public var instructions: String {
        var text = """
            spokes init: wrote \(settingsPath) and \(secretPath) (mode 600; the secret is never printed)
            cluster '\(cluster)' on \(lan.interface.subnet ?? lan.address): this machine is \(lan.address) (\(lan.interface.name)), beacons go to \(lan.broadcast)

            """
        if !lan.others.isEmpty {
            text += "other LAN addresses here: \(lan.others.map { "\($0.address) (\($0.name))" }.joined(separator: ", ")); 'spokes init --host ADDRESS' picks one\n"
        }
        text += """

            Copy both files into \(directory) on every other machine (scp -p keeps the secret's
            mode), then run on every machine, this one included:

              \(nodeCommand)

            Open TCP and UDP \(port) (the cluster port) and UDP \(ClusterSettings().discoveryPort) (discovery) between the machines\(dashboardPort.map { ", and TCP \($0) (the dashboard)" } ?? "").
            'spokes status --config \(shellQuoted(settingsPath))' lists the members.

            """
        return text
    }
}

/// `'a b'` for a path with spaces or quotes; the path itself when it needs none.
func shellQuoted(_ text: String) -> String {
    if !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "/._-+:@%,=".contains($0)) }) { return text }
    return "'" + text.replacing("'", with: "'\\''") + "'"
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
