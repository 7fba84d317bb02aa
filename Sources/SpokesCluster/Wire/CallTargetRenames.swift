/// Distributed functions whose names on the wire changed in a protocol version, so a
/// node still talks to nodes and clients of the release before.
///
/// A call names its function by the mangled name of its distributed thunk
/// (`$s11SpokesBikes10JobServiceC4jobs...TE`). That name holds the module and type the
/// function lives in, and the types of its arguments and result, so moving a distributed
/// actor (or a type in its signatures) to another module renames its functions, although
/// their arguments and results encode the same JSON. Each rename here pairs the name the
/// older release uses with this build's, and may also move the call to another actor
/// (the well-known name of its recipient):
/// - a call **received** under an old name runs under the new one, whoever sent it;
/// - a call **sent** to a peer whose connection agreed a version below ``since`` goes
///   under the old name, to the old recipient.
///
/// The names are facts of the two builds, written out (`Scripts/call-targets` prints them
/// from a binary's symbols); `JobDesksUnderOldNamesTests` calls every renamed function
/// through a client of protocol 4 and checks each arrives under its old name. A received
/// call runs only on an actor whose type its name belongs to (``ClusterSystem``), so a
/// wrong pair is refused, never run on the wrong actor.
public struct CallTargetRenames: Sendable {
    /// One renamed function.
    public struct Rename: Sendable, Hashable {
        /// The older release's thunk name, and the well-known name of the actor it was
        /// called on (nil: the call's recipient is kept, e.g. a client's listener).
        public var oldTarget: String
        public var oldRecipient: String?
        /// This build's thunk name, and the actor that serves it now.
        public var newTarget: String
        public var newRecipient: String?
    }

    /// The protocol version from which the new names are used.
    public let since: Int
    public let renames: [Rename]
    private let byOld: [String: Rename]
    private let byNew: [String: Rename]

    public init(since: Int, renames: [Rename]) {
        self.since = since
        self.renames = renames
        byOld = Dictionary(renames.map { ($0.oldTarget, $0) }) { first, _ in first }
        byNew = Dictionary(renames.map { ($0.newTarget, $0) }) { first, _ in first }
    }

    /// A received call's function and recipient as this build names them.
    public func received(target: String, recipient: String) -> (target: String, recipient: String) {
        guard let rename = byOld[target] else { return (target, recipient) }
        let moved = rename.oldRecipient == recipient ? rename.newRecipient ?? recipient : recipient
        return (rename.newTarget, moved)
    }

    /// A call's function and recipient as a peer that agreed `version` names them.
    public func sent(target: String, recipient: String, version: Int) -> (target: String, recipient: String) {
        guard version < since, let rename = byNew[target] else { return (target, recipient) }
        let moved = rename.newRecipient == recipient ? rename.oldRecipient ?? recipient : recipient
        return (rename.oldTarget, moved)
    }
}
