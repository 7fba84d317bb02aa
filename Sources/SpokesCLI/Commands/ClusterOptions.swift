import Foundation
import SpokesCluster

/// The flags every cluster command shares, and how they become ``ClusterSettings``:
/// defaults, then the `--config` file, then `SPOKES_*` variables, then these flags.
enum ClusterOptions {
    static let connection: [OptionSpec] = [
        .value("config", "FILE", help: "A cluster.yaml file."),
        .value("cluster", "NAME", help: "The cluster to join; nodes of other clusters are refused. (default: spokes)"),
        .value("discovery", "MODE", help: "loopback (this machine), lan (needs --broadcast) or off. (default: loopback)"),
        .value("discovery-port", "PORT", help: "UDP port of the beacons. (default: 7946)"),
        .value("broadcast", "ADDR", help: "Broadcast address for lan discovery, e.g. your LAN's."),
    ]

    static let node: [OptionSpec] = [
        .value("name", "NAME", help: "This node's name, unique in the cluster (default: node-<random>)."),
        .value("host", "HOST", help: "Address to listen on. (default: 127.0.0.1)"),
        .value("port", "PORT", help: "TCP port; 0 picks a free one. (default: 0)"),
        .value("slots", "S", help: "Tasks this node runs at once. (default: 4)"),
        .repeated("seed", "HOST:PORT", help: "A node to connect to, in any discovery mode."),
        .flag("insecure", help: "Without a cluster secret, still listen beyond loopback (an open cluster: anyone who can reach it can join)."),
        .value("dashboard", "PORT", help: "Serve the web dashboard on this TCP port (0 picks a free one; off: none). (default: off)"),
        .value("dashboard-host", "HOST", help: "Address the dashboard listens on. (default: 127.0.0.1)"),
    ]

    /// Settings from the layers, with these flags applied last.
    static func settings(_ arguments: ParsedArguments, environment: [String: String]) throws -> ClusterSettings {
        var settings = try ClusterSettings.load(file: try arguments.string("config"), environment: environment)
        if let cluster = try arguments.string("cluster") { settings.cluster = cluster }
        if let mode = try arguments.string("discovery") {
            guard let parsed = ClusterSettings.DiscoveryMode(rawValue: mode) else {
                throw UsageError("--discovery must be loopback, lan or off, got '\(mode)'")
            }
            settings.discoveryMode = parsed
        }
        if let port = try arguments.integer("discovery-port", in: 1...65_535) { settings.discoveryPort = UInt16(port) }
        if let broadcast = try arguments.string("broadcast") { settings.broadcastAddress = broadcast }
        if settings.discoveryMode == .lan, settings.broadcastAddress.isEmpty {
            throw UsageError("--discovery lan needs --broadcast ADDR (the LAN's broadcast address): Spokes never guesses where to send")
        }
        if arguments.spec.options.contains(where: { $0.name == "name" }) {
            if let name = try arguments.string("name") { settings.nodeName = name }
            if let host = try arguments.string("host") { settings.host = host }
            if let port = try arguments.integer("port", in: 0...65_535) { settings.port = UInt16(port) }
            if let slots = try arguments.integer("slots", in: 1...10_000) { settings.slots = slots }
            let seeds = arguments.strings("seed")
            for seed in seeds {
                do {
                    _ = try SocketAddress(parsing: seed)
                } catch {
                    throw UsageError("--seed \(seed): \(error)")
                }
            }
            if !seeds.isEmpty { settings.peers = seeds }
            if let dashboard = try arguments.string("dashboard") {
                guard dashboard == "off" || UInt16(dashboard) != nil else {
                    throw UsageError("--dashboard must be a TCP port from 0 to 65535 (0 picks a free one) or off, got '\(dashboard)'")
                }
                settings.dashboardPort = UInt16(dashboard)
            }
            if let host = try arguments.string("dashboard-host") { settings.dashboardHost = host }
            settings.allowInsecure = arguments.flag("insecure")
        }
        do {
            try settings.validate()
        } catch {
            throw UsageError("\(error)")
        }
        return settings
    }
}
