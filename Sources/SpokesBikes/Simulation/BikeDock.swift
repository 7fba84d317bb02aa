/// Something a user can take a bike from and leave a bike at: a station, wherever it lives.
///
/// A simulation in one process uses ``BikeStation`` actors; a cluster job will use
/// stations that live on another node. Each call is one atomic operation that says
/// whether it succeeded. `Failure` is `Never` for local stations, so their users need
/// no `try`.
public protocol BikeDock: Sendable {
    associatedtype Failure: Error

    /// The station id, to recognise the goal station.
    var stationID: String { get }
    /// Takes a bike if one is free; returns whether it did. `move` names the operation.
    func takeBike(_ move: Move) async throws(Failure) -> Bool
    /// Leaves a bike if a slot is empty; returns whether it did. `move` names the operation.
    func leaveBike(_ move: Move) async throws(Failure) -> Bool
}
