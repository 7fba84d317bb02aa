import FoundationEssentials
import Glibc
import SpokesCluster
import SpokesConcurrency

/// `spokes init`: sets up a LAN cluster's two files on the first machine (a cluster.yaml
/// and a fresh secret file, mode 600, never printed) and prints the one command every
/// machine runs (issue 30 §2). What it writes is ``ClusterInit``; this is its shell.
enum InitCommand {
    static let directory = Option.string("directory", "DIR", default: ".",
                                         help: "Folder for cluster.yaml and the secret file; made when missing. Use the same folder on every machine.")
    static let cluster = Option.string("cluster", "NAME", help: "The cluster's name.", defaultText: "lab-<random>")
    static let host = Option.string("host", "ADDR", help: "This machine's LAN address (one of its interfaces).", defaultText: "the first LAN interface's")
    static let broadcast = Option.string("broadcast", "ADDR", help: "The LAN's broadcast address, where beacons go.", defaultText: "the interface's subnet's")
    static let port = Option.integer("port", "PORT", in: 1...65535, default: ClusterInit.defaultPort, help: "The cluster port every node listens on (TCP and UDP).")
    static let dashboard = Option.integer("dashboard", "PORT", in: 1...65535, help: "Every node serves the dashboard (and GET /metrics) on this port.", defaultText: "none")

    static let spec = CommandSpec(
        name: "init",
        abstract: "Set up a LAN cluster: write cluster.yaml and a fresh secret, print the command for every machine.",
        discussion: """
            Picks this machine's LAN address and the LAN's broadcast address (or takes \
            --host and --broadcast), writes DIR/cluster.yaml and DIR/secret (32 random bytes \
            as hex, mode 600, never printed) and prints the one command every machine runs, \
            this one included, once both files are copied into the same folder there. It \
            never overwrites: an existing cluster.yaml or secret in DIR is an error.
            """,
        options: [directory, cluster, host, broadcast, port, dashboard])

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        try run(arguments, context: context, interfaces: NetworkInterface.current())
    }

    /// Runs `init` against `interfaces` (this machine's, or a test's).
    static func run(_ arguments: ParsedArguments, context: CommandContext, interfaces: [NetworkInterface]) throws -> Int32 {
        // Every flag is read (and a bad one refused) before the machine is looked at.
        let name = try arguments.value(cluster) ?? ClusterInit.randomName()
        try ClusterInit.checkName(name)
        let folder = URL(fileURLWithPath: HomeDirectory.expand(try arguments.value(directory), environment: context.environment)).standardizedFileURL.path
        let (clusterPort, dashboardPort) = (try arguments.value(port), try arguments.value(dashboard))
        let lan = try LANAddress.choose(among: interfaces, host: try arguments.value(host), broadcast: try arguments.value(broadcast))
        let plan = ClusterInit(cluster: name, lan: lan, port: clusterPort, dashboardPort: dashboardPort, directory: folder)
        try write(plan)
        context.standardOutput(plan.instructions)
        return 0
    }

    /// Writes the secret (mode 600) and cluster.yaml, neither over an existing file, then
    /// reads them back as a node would; on any failure neither file is left behind.
    static func write(_ plan: ClusterInit) throws(InitError) {
        var isDirectory = false
        if FileManager.default.fileExists(atPath: plan.directory, isDirectory: &isDirectory) {
            guard isDirectory else { throw .notAFolder(plan.directory) }
        } else {
            do {
                try FileManager.default.createDirectory(atPath: plan.directory, withIntermediateDirectories: true)
            } catch {
                throw .cannotWrite(plan.directory, reason: DiskError.reason(of: error))
            }
        }
        for path in [plan.settingsPath, plan.secretPath] where FileManager.default.fileExists(atPath: path) {
            throw .exists(path)
        }
        var written: [String] = []
        do throws(InitError) {
            try create(plan.secretPath, ClusterSecret.generateText() + "\n", mode: 0o600)
            written.append(plan.secretPath)
            try create(plan.settingsPath, plan.settingsText, mode: 0o644)
            written.append(plan.settingsPath)
            let settings: ClusterSettings
            do {
                settings = try ClusterSettings.loadLayers(file: plan.settingsPath, environment: [:]).settings
            } catch {
                throw InitError.unreadable(plan.settingsPath, reason: "\(error)")
            }
            guard settings.secret != nil, settings.cluster == plan.cluster, settings.host == plan.lan.address else {
                throw InitError.unreadable(plan.settingsPath, reason: "it does not read back as written")
            }
        } catch {
            for path in written { unlink(path) }
            throw error
        }
    }

    /// Creates `path` with `mode` (never over an existing file) holding `text`, flushed.
    private static func create(_ path: String, _ text: String, mode: mode_t) throws(InitError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else {
            if errno == EEXIST { throw .exists(path) }
            throw .cannotWrite(path, reason: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var bytes = Array(text.utf8)[...]
        var failure: Int32 = fchmod(fd, mode) == 0 ? 0 : errno
        while failure == 0, !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                failure = errno
            } else {
                bytes = bytes.dropFirst(count)
            }
        }
        if failure == 0, fsync(fd) != 0 { failure = errno }
        if failure != 0 {
            unlink(path)
            throw .cannotWrite(path, reason: String(cString: strerror(failure)))
        }
    }
}

/// Why `spokes init` wrote nothing (exit 1), naming the file.
enum InitError: Error, CustomStringConvertible, Equatable {
    case exists(String)
    case notAFolder(String)
    case cannotWrite(String, reason: String)
    case unreadable(String, reason: String)

    var description: String {
        switch self {
        case .exists(let path):
            "\(path) already exists: spokes init never overwrites a cluster's files (its secret would change under its nodes); remove it, or give another --directory"
        case .notAFolder(let path): "--directory \(path) is a file, not a folder"
        case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)"
        case .unreadable(let path, let reason): "\(path) was written but does not load as a node would load it: \(reason)"
        }
    }
}
