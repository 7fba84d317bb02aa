/// Another live node of the cluster already has this node's name: a node that finds out
/// stops (`spokes node` exits 1 with this message), since two nodes with one name would
/// evict each other from every member list.
///
/// Who keeps the name: a member the other nodes are connected to and hear from (within
/// the suspect timeout) keeps it against any newcomer; of two nodes with one name that
/// meet directly, the one that started first (the smaller incarnation). A node whose old
/// life is dead, or gone without a word and silent, is not in the way: a restart takes
/// its name back at once. See ``ClusterSystem`` and ``Membership``.
public struct NameConflict: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name both nodes have.
    public var name: String
    /// Where the node that keeps the name listens, `host:port`.
    public var address: String

    public init(name: String, address: String) {
        self.name = name
        self.address = address
    }

    public var description: String {
        "node name '\(name)' is taken by a live member of the cluster at \(address); give this node another name (--name or node.name), or stop that member first"
    }
}
