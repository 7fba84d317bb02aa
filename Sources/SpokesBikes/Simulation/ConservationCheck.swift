/// The check every report carries: no bike appeared or vanished, and every station's
/// counts stayed possible.
///
/// Holds when bikes docked before = bikes docked after + bikes still ridden, every
/// station kept its capacity, and no count is below zero.
public struct ConservationCheck: Sendable, Hashable, Codable {
    public var bikesBefore: Int
    public var bikesAfter: Int
    /// Bikes held by users whose run was cut short (cancelled or gave up).
    public var bikesInUse: Int
    /// One line per station whose counts are impossible; empty when all is well.
    public var violations: [String]

    public var holds: Bool { violations.isEmpty && bikesBefore == bikesAfter + bikesInUse }

    /// Compares the stations before and after a run (same order, same ids).
    public init(before: [Station], after: [Station], bikesInUse: Int) {
        bikesBefore = before.reduce(0) { $0 + $1.freeBikes }
        bikesAfter = after.reduce(0) { $0 + $1.freeBikes }
        self.bikesInUse = bikesInUse
        violations = []
        for (old, new) in zip(before, after) {
            if new.freeBikes < 0 || new.emptySlots < 0 {
                violations.append("station \(new.id) has \(new.freeBikes) bikes and \(new.emptySlots) slots")
            } else if new.capacity != old.capacity {
                violations.append("station \(new.id) capacity changed from \(old.capacity) to \(new.capacity)")
            }
        }
        if before.count != after.count {
            violations.append("\(before.count) stations before but \(after.count) after")
        }
    }

    enum CodingKeys: String, CodingKey {
        case bikesBefore, bikesAfter, bikesInUse, violations, holds
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        bikesBefore = try container.decode(Int.self, forKey: .bikesBefore)
        bikesAfter = try container.decode(Int.self, forKey: .bikesAfter)
        bikesInUse = try container.decode(Int.self, forKey: .bikesInUse)
        violations = try container.decode([String].self, forKey: .violations)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(bikesBefore, forKey: .bikesBefore)
        try container.encode(bikesAfter, forKey: .bikesAfter)
        try container.encode(bikesInUse, forKey: .bikesInUse)
        try container.encode(violations, forKey: .violations)
        try container.encode(holds, forKey: .holds)
    }
}
