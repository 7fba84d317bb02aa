@testable import SpokesBikes

/// The message of the ``SweepPlanError`` `body` throws; nil when it throws none.
func sweepPlanErrorMessage(_ body: () throws(SweepPlanError) -> Any) -> String? {
    do {
        _ = try body()
        return nil
    } catch {
        return error.description
    }
}
