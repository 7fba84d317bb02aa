import SpokesCluster

extension JobView {
    /// The view of a coordinator's record, `now` being the coordinator's clock at the time
    /// it reported.
    init(_ record: JobBoard.Record, coordinatorNow now: Double, stationBikes: [Int]?) {
        let elapsed = max(0, (record.endedAt ?? now) - record.startedAt)
        let rate = elapsed > 0 ? Double(record.done) / elapsed : 0
        let remaining = record.total - record.done - record.failed
        let estimate: Double? = record.state == .running && rate > 0 ? Double(remaining) / rate : nil
        self.init(
            id: record.id, kind: record.kind, title: record.title, coordinator: record.coordinator, state: record.state.rawValue,
            total: record.total, done: record.done, failed: record.failed, retries: record.retries, elapsed: elapsed, rate: rate,
            estimatedRemaining: estimate,
            perNode: record.perNode.mapValues { NodeShare(done: $0.done, running: $0.running) },
            stationBikes: stationBikes,
            slots: record.state == .running ? record.share.map { share in
                JobSlots(share: share, cost: record.cost ?? .cpu, inUse: record.perNode.values.reduce(0) { $0 + $1.running },
                         remaining: max(0, remaining - record.cancelled))
            } : nil)
    }
}
