/// A change in the member list, as subscribers see it.
public enum MembershipEvent: Sendable, Hashable {
    /// A node appeared (or a restarted node appeared with a new incarnation).
    case joined(Member)
    /// A known member changed state, e.g. alive to suspect.
    case changed(Member, from: Member.State)
    /// A member was dropped from the list (replaced by a new incarnation, or long dead).
    case removed(Member)

    /// The member the event is about, as it is after the event.
    public var member: Member {
        switch self {
        case .joined(let member), .changed(let member, _), .removed(let member): member
        }
    }
}
