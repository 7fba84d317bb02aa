import FoundationEssentials
import SpokesBikes
import SpokesCluster

/// A flag that sets one of the cluster's settings (see ``ClusterSettings/table``). Its
/// help, range and default come from the settings table, and its value goes through the
/// setting's own reader, so a flag, cluster.yaml and a `SPOKES_*` variable accept exactly
/// the same values and their errors read alike (naming the flag, exit 2).
struct SettingFlag: OptionDeclaration {
    let spec: OptionSpec
    /// The setting's YAML path, e.g. `node.slots`.
    let path: String

    /// `--name VALUE` for the setting at `path`; `help` replaces the table's doc line.
    init(_ name: String, _ valueName: String, setting path: String, help: String? = nil) {
        guard let setting = ClusterSettings.setting(path) else { preconditionFailure("no setting \(path)") }
        self.path = path
        let doc = help ?? (setting.doc.prefix(1).uppercased() + setting.doc.dropFirst() + ".")
        let defaultText = setting.isList ? nil : setting.defaultText
        spec = OptionSpec(name: name, valueName: valueName, help: doc, defaultValue: defaultText == "\"\"" ? nil : defaultText,
                          isRepeatable: setting.isList, range: setting.range)
    }

    /// What was given for this flag (every value of a list), or nil when it was not given.
    func given(in arguments: ParsedArguments) -> (flag: String, path: String, values: [String])? {
        let values = spec.isRepeatable ? arguments.repeated[spec.name] ?? [] : arguments.values[spec.name].map { [$0] } ?? []
        return values.isEmpty ? nil : ("--" + spec.name, path, values)
    }
}

/// The flags every cluster command shares, and how they become ``ClusterSettings``:
/// defaults, then the `--config` file, then `SPOKES_*` variables, then these flags.
enum ClusterOptions {
    static let config = Option.string("config", "FILE", help: "A cluster.yaml file (see cluster.yaml in the repository for every setting).")
    static let cluster = SettingFlag("cluster", "NAME", setting: "cluster",
                                     help: "The cluster to join; nodes of other clusters are refused. A client given --to and no cluster joins that node's.")
    static let discovery = SettingFlag("discovery", "MODE", setting: "discovery.mode",
                                       help: "How nodes are found: loopback (this machine), lan (needs --broadcast) or off.")
    static let discoveryPort = SettingFlag("discovery-port", "PORT", setting: "discovery.port", help: "UDP port of the beacons.")
    static let broadcast = SettingFlag("broadcast", "ADDR", setting: "discovery.broadcast", help: "Broadcast address for lan discovery, e.g. your LAN's.")

    /// The flags of every command that talks to a cluster.
    static let connectionOptions: [any OptionDeclaration] = [config, cluster, discovery, discoveryPort, broadcast]
    /// The same, as specs (for commands that list string-named specs).
    static var connection: [OptionSpec] { connectionOptions.map(\.spec) }

    static let name = SettingFlag("name", "NAME", setting: "node.name", help: "This node's name, unique in the cluster (default: node-<random>).")
    static let host = SettingFlag("host", "HOST", setting: "node.host",
                                  help: "IPv4 address to listen on; loopback keeps the node on this machine; lan: this machine's address on the LAN of discovery.broadcast (as 'spokes init' prints).")
    static let port = SettingFlag("port", "PORT", setting: "node.port", help: "TCP port to listen on; 0 picks a free one.")
    static let advertise = SettingFlag("advertise", "HOST:PORT", setting: "node.advertise",
                                       help: "The address other nodes should use for this one, when it is not where it listens (NAT, containers); UDP probes go there too.")
    static let slots = SettingFlag("slots", "S", setting: "node.slots",
                                   help: "Cpu tasks this node runs at once; cores: one per core it may run on (see README, 'Sizing a cluster').")
    static let waitingSlots = SettingFlag("waiting-slots", "N", setting: "node.waiting_slots",
                                          help: "Waiting tasks (they mostly sleep or await calls, e.g. real-time bike users) this node runs at once.")
    static let peer = SettingFlag("peer", "HOST:PORT", setting: "peers", help: "A node to connect to, in any discovery mode; repeat for several.")
    static let insecure = Option.flag("insecure", help: "Without a cluster secret, still listen beyond loopback (an open cluster: anyone who can reach it can join).")
    static let dashboard = SettingFlag("dashboard", "PORT", setting: "dashboard.port",
                                       help: "Serve the web dashboard on this TCP port; 0 picks a free one; off serves none.")
    static let dashboardHost = SettingFlag("dashboard-host", "HOST", setting: "dashboard.host",
                                           help: "Address the dashboard listens on; lan: this machine's address on the LAN of discovery.broadcast.")
    static let dataDirectory = SettingFlag("data-directory", "DIR", setting: "data_directory",
                                           help: "Where the node keeps its job records; ~ is $HOME.")

    /// The flags of `spokes node`.
    static let nodeOptions: [any OptionDeclaration] = [name, host, port, advertise, slots, waitingSlots, peer, insecure, dashboard, dashboardHost, dataDirectory]

    /// Every setting flag, in the order they apply.
    private static let settingFlags = [cluster, discovery, discoveryPort, broadcast, name, host, port, advertise, slots, waitingSlots, peer, dashboard, dashboardHost, dataDirectory]

    /// The word that stands for this machine's LAN address in `--host` and `--dashboard-host`.
    static let lanHost = "lan"

    /// `given` with every `lan` host replaced by the address of this machine's interface
    /// on the LAN whose broadcast address is `broadcast`; errors name the flag.
    static func resolveLAN(
        _ given: [(flag: String, path: String, values: [String])], broadcast: String, interfaces: () -> [NetworkInterface]
    ) throws(UsageError) -> [(flag: String, path: String, values: [String])] {
        let hosts: Set<String> = ["node.host", "dashboard.host"]
        guard let first = given.first(where: { hosts.contains($0.path) && $0.values.contains(lanHost) }) else { return given }
        guard !broadcast.isEmpty else {
            throw UsageError("\(first.flag) lan needs the LAN's broadcast address: discovery.broadcast in cluster.yaml (as 'spokes init' writes it), or --broadcast ADDR")
        }
        let address = try LANAddress.matching(broadcast: broadcast, among: interfaces(), flag: first.flag).address
        return given.map { entry in
            hosts.contains(entry.path) ? (entry.flag, entry.path, entry.values.map { $0 == lanHost ? address : $0 }) : entry
        }
    }

    /// Settings from the layers, with the command's own flags applied last. A client
    /// that names a node (`--to`) but no cluster (no `--cluster`, no `cluster:` in the
    /// file, no `SPOKES_CLUSTER`) joins that node's cluster.
    /// `--host lan` and `--dashboard-host lan` become this machine's address on the LAN
    /// of discovery.broadcast, found among `interfaces` (read only when one says `lan`).
    static func settings(
        _ arguments: ParsedArguments, environment: [String: String], interfaces: () -> [NetworkInterface] = NetworkInterface.current
    ) throws -> ClusterSettings {
        BikeLimits.declare()
        let file = try arguments.value(config).map { HomeDirectory.expand($0, environment: environment) }
        var (settings, explicit) = try ClusterSettings.loadLayers(file: file, environment: environment)
        var given = settingFlags.filter { arguments.spec.option(named: $0.spec.name) != nil }.compactMap { $0.given(in: arguments) }
        given = try resolveLAN(given, broadcast: given.last { $0.path == "discovery.broadcast" }?.values.last ?? settings.broadcastAddress,
                               interfaces: interfaces)
        let mode = given.last { $0.path == "discovery.mode" }?.values.last ?? settings.discoveryMode.rawValue
        if mode == ClusterSettings.DiscoveryMode.lan.rawValue, settings.broadcastAddress.isEmpty, !given.contains(where: { $0.path == "discovery.broadcast" }) {
            throw UsageError("--discovery lan needs --broadcast ADDR (the LAN's broadcast address): Spokes never guesses where to send")
        }
        do throws(ConfigurationError) {
            try settings.apply(flags: given)
        } catch {
            throw UsageError(error.description)
        }
        explicit.formUnion(given.map(\.path))
        if arguments.spec.option(named: insecure.spec.name) != nil {
            settings.allowInsecure = try arguments.value(insecure)
        }
        if arguments.spec.option(named: NodeClient.to.spec.name) != nil, arguments.isSet(NodeClient.to), !explicit.contains("cluster") {
            settings.joinsAnyCluster = true
        }
        return settings
    }
}
