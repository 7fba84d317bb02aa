/// The wire protocol versions a node (or client) speaks, lowest to highest, and the rules
/// that let releases meet during a rolling upgrade (Docs/upgrades.md):
///
/// - a build speaks its own version and the one before it (``current``);
/// - two peers agree, per connection, on the highest version both speak
///   (``agreed(with:)``), or refuse each other with a message naming both ranges and
///   what to do (``refusal(of:peer:local:)``);
/// - behaviour that every member must understand waits until every alive member speaks
///   its version (``common(_:)``; ``ClusterNode/mayUse(protocolVersion:)`` asks it).
///
/// On the wire a handshake (and a beacon, the same type) carries its sender's range as
/// two numbers: `protocolVersion`, the lowest, which is what a release of protocol 3
/// compares for equality, and `highestProtocolVersion`, which protocol 3's decoders
/// ignore and which a sender speaking only protocol 3 leaves out.
public struct ProtocolVersions: Sendable, Hashable, Codable, CustomStringConvertible {
    public var lowest: Int
    public var highest: Int

    /// A range; `highest` below `lowest` is taken as `lowest` alone.
    public init(lowest: Int, highest: Int) {
        self.lowest = lowest
        self.highest = max(lowest, highest)
    }

    /// A single version, as a release of protocol 3 speaks.
    public static func only(_ version: Int) -> ProtocolVersions {
        ProtocolVersions(lowest: version, highest: version)
    }

    /// What this build speaks: 3 (frames, handshakes, beacons and probes sealed where
    /// there is a secret); 4, which adds the range exchange itself (handshakes and beacons
    /// carry the sender's range; a connection of 4 binds both ranges into its handshake's
    /// proofs); and 5, under which the job desk's calls have their new names (the job
    /// layer's module, the bike desk): ``CallTargetRenames/current``. Below 5 a call goes
    /// and is taken under its older name, so releases 0.2 (3) and 0.3 (3 to 4) still talk
    /// to this one. 6 adds ``WireMessage/batch(_:)``: many calls and replies in one frame
    /// (``WireBatch``), sent only on a connection that agreed 6. 7 is the one job layer
    /// (Docs/one-job-layer.md): a workload's job (a bike job) is a `job-ID` group that
    /// only nodes of 7 can open, so a coordinator starts one only once every member speaks
    /// 7 (``oneJobLayer``), and until then runs it as before.
    public static let current = ProtocolVersions(lowest: 3, highest: 7)

    /// The version from which a workload's job (a bike job) is kept in a `job-ID` group
    /// and run by the job layer's one desk.
    public static let oneJobLayer = 7

    /// The version from which a connection may carry ``WireMessage/batch(_:)`` frames.
    public static let batching = 6

    /// The version from which handshakes and beacons carry the sender's range.
    public static let rangeExchange = 4

    /// What a member that reports no range (in a status answer) speaks: protocol 3
    /// alone, the last version without the range exchange.
    public static let unreported = ProtocolVersions.only(rangeExchange - 1)

    public func contains(_ version: Int) -> Bool { (lowest...highest).contains(version) }

    /// The version two peers use on their connection: the highest both speak, or nil
    /// when their ranges do not meet.
    public func agreed(with other: ProtocolVersions) -> Int? {
        let version = min(highest, other.highest)
        return version >= max(lowest, other.lowest) ? version : nil
    }

    /// The highest version every one of `ranges` speaks, or nil when they have none in
    /// common (or there are none): the version a cluster of those members may use for
    /// behaviour every member must understand.
    public static func common(_ ranges: some Sequence<ProtocolVersions>) -> Int? {
        var lowest = Int.min
        var highest = Int.max
        var any = false
        for range in ranges {
            any = true
            lowest = max(lowest, range.lowest)
            highest = min(highest, range.highest)
        }
        return any && highest >= lowest ? highest : nil
    }

    /// `3`, or `3 to 4`.
    public var description: String {
        lowest == highest ? "\(lowest)" : "\(lowest) to \(highest)"
    }

    /// Why `peer`, who speaks `theirs`, cannot talk to `local`, who speaks `self`; nil
    /// when they share a version. The message names both ranges and what to do: the
    /// side that is behind is upgraded (every release speaks its own protocol and the one
    /// before, so the nodes are upgraded one release at a time), or the other side runs
    /// a release that still speaks the older version.
    public func refusal(of theirs: ProtocolVersions, peer: String, local: String) -> String? {
        guard agreed(with: theirs) == nil else { return nil }
        let speaks = "\(peer) speaks protocol \(theirs) and \(local) speaks \(self)"
        if theirs.highest < lowest {
            return "\(speaks): upgrade \(peer) to a release that speaks \(lowest) (each release speaks its own protocol and the one before; "
                + "upgrade one release at a time), or run \(local) on a release that still speaks \(theirs.highest)"
        }
        return "\(speaks): upgrade \(local) to a release that speaks \(theirs.lowest) (each release speaks its own protocol and the one before; "
            + "upgrade one release at a time), or run \(peer) on a release that still speaks \(highest)"
    }
}
