/// One run of one node: its name and an incarnation number taken at each start, so a
/// restarted node is told apart from its previous life.
///
/// Incarnations grow from one start to the next (they are the start time in
/// microseconds), so membership can tell the newer life of a node from a stale one.
public struct NodeID: Sendable, Hashable, Codable, CustomStringConvertible {
    public let name: String
    public let incarnation: UInt64

    public init(name: String, incarnation: UInt64) {
        self.name = name
        self.incarnation = incarnation
    }

    public var description: String { "\(name)#\(String(incarnation, radix: 16))" }
}

import Glibc

/// Names one distributed actor in the cluster: the node it lives on and its name there.
///
/// Well-known actors (a node's worker, its status actor) have fixed names, so any node
/// can address them on any other node it knows; others get a unique name when made.
public struct ActorID: Sendable, Hashable, Codable, CustomStringConvertible {
    public let node: NodeID
    public let name: String

    public init(node: NodeID, name: String) {
        self.node = node
        self.name = name
    }

    public var description: String { "\(name)@\(node)" }
}
