import SpokesCluster

// The numbers a node checks in what peers send its bike jobs, before any of them is
// added up, used as a loop bound or turned into a duration. Each check throws
// ``OutOfRange``, which travels back to the peer as a sentence and is counted as
// `value_out_of_range`; SECURITY.md lists the ranges.

extension BikeJob {
    /// Most bikes, and most empty slots, at one station of a submitted network.
    public static let maximumStationCount = Station.maximumCount

    /// Throws when the job's deadline or retries, or a station's counts or position, are
    /// out of range. (Users, paths and timing are checked by ``SimulationOptions/validate(for:)``.)
    public func checkRanges() throws(OutOfRange) {
        if let deadline { try OutOfRange.check("deadline", deadline, in: JobRunner.deadlineRange, unit: " seconds") }
        if let retries { try OutOfRange.check("retries", retries, in: JobRunner.retryRange) }
        for (index, station) in network.stations.enumerated() {
            try OutOfRange.check("stations[\(index)].free_bikes", station.freeBikes, in: 0...Self.maximumStationCount)
            try OutOfRange.check("stations[\(index)].empty_slots", station.emptySlots, in: 0...Self.maximumStationCount)
            try OutOfRange.check("stations[\(index)].latitude", station.latitude, in: -90...90)
            try OutOfRange.check("stations[\(index)].longitude", station.longitude, in: -180...180)
        }
        if let latitude = network.location?.latitude { try OutOfRange.check("location.latitude", latitude, in: -90...90) }
        if let longitude = network.location?.longitude { try OutOfRange.check("location.longitude", longitude, in: -180...180) }
    }
}

extension BikeUserTask.Input {
    /// Most stations a `bikes.user` task addresses.
    public static let maximumStations = 1_000_000

    /// Throws when a number of the task's input is out of range: the station count, the
    /// goal's index, the user, paths, timing, and the progress it resumes from (which may
    /// not exceed `maxMoves`, so the random stream is never replayed past the user's limit).
    public func checkRanges() throws(OutOfRange) {
        try OutOfRange.check("station count", stationCount, in: 1...Self.maximumStations)
        if let goalIndex { try OutOfRange.check("goal index", goalIndex, in: 0...stationCount - 1) }
        try OutOfRange.check("user", user, in: 0...Int.max)
        try OutOfRange.check("epoch", epoch, in: 0...Int.max)
        try OutOfRange.check("attempt", attempt, in: 1...Int.max)
        try OutOfRange.check("paths", paths, in: 0...SimulationOptions.maximumPaths)
        try OutOfRange.check("move time", timing.moveTime, in: 0...SimulationOptions.maximumMoveTime, unit: " seconds")
        try OutOfRange.check("time scale", timing.timeScale, in: 0...SimulationOptions.maximumTimeScale)
        try OutOfRange.check("max moves", maxMoves, in: 1...Int.max)
        try OutOfRange.check("progress.moves", progress.moves, in: 0...maxMoves)
        try OutOfRange.check("progress.paths", progress.paths, in: 0...progress.moves)
        try OutOfRange.check("progress.failedTakes", progress.failedTakes, in: 0...progress.moves)
        try OutOfRange.check("progress.failedLeaves", progress.failedLeaves, in: 0...progress.moves)
    }
}

extension JobProgress {
    /// Most users, retries or running tasks a progress report may count.
    public static let maximumCount = 1_000_000_000

    /// Throws when a count is negative or beyond ``maximumCount``, or the elapsed time is
    /// not 0 to 10^9 seconds: what a submitter's progress line computes with.
    public func checkRanges() throws(OutOfRange) {
        for (name, count) in [("usersDone", usersDone), ("usersTotal", usersTotal), ("usersFailed", usersFailed), ("retries", retries)] {
            try OutOfRange.check(name, count, in: 0...Self.maximumCount)
        }
        for (node, running) in runningPerNode { try OutOfRange.check("runningPerNode[\(node)]", running, in: 0...Self.maximumCount) }
        try OutOfRange.check("elapsed", elapsed, in: 0...1e9, unit: " seconds")
    }
}
