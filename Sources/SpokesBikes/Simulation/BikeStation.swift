/// A station shared by concurrent users: an actor that owns one ``Station`` value.
///
/// Taking and leaving are each one actor call that checks and changes the counts
/// together, so two users can never both take the last bike. Invariant: the bikes
/// plus empty slots never change, and neither count goes below zero.
public actor BikeStation: BikeDock {
    public typealias Failure = Never

    public nonisolated let stationID: String
    private var station: Station

    public init(_ station: Station) {
        self.stationID = station.id
        self.station = station
    }

    public func takeBike(_ move: Move) -> Bool {
        station.takeBike()
    }

    public func leaveBike(_ move: Move) -> Bool {
        station.leaveBike()
    }

    /// The station's counts now.
    public var state: Station { station }
}
