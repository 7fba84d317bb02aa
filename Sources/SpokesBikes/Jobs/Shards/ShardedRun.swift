import SpokesCluster
import SpokesConcurrency
import Synchronization

/// A sharded job's shards as its coordinator's run in one epoch sees them: it fences
/// retried users on every shard, waits for the shards' commits before it commits a
/// user's result, takes their committed books at the end, and watches their hosts.
/// Any shard that cannot go on (its host is gone, a call failed) loses the epoch: the
/// run stops and the job goes on in its next one (``BikeJob/LostShard``). For a job
/// that is not sharded, every call does nothing.
final class ShardedRun: Sendable {
    private struct State {
        var lossReason: String?
        var onLoss: (@Sendable () -> Void)?
    }

    let job: String
    let epoch: Int
    let hosts: [NodeID]
    private let shards: [JobStationShard]
    private let node: ClusterNode
    private let state = Mutex(State())

    /// Seconds a shard may take to answer a fence or a flush before the epoch is lost.
    static let patience = 10.0

    init(job: String, epoch: Int, set: BikeJob.ShardSet?, node: ClusterNode) throws {
        self.job = job
        self.epoch = epoch
        self.node = node
        let hosts = set?.hosts ?? []
        self.hosts = hosts
        shards = try hosts.enumerated().map { shard, host in
            try JobStationShard.at(host, job: job, epoch: epoch, shard: shard, using: node.system)
        }
    }

    /// Why the epoch was lost, once it was.
    var lossReason: String? { state.withLock { $0.lossReason } }

    /// Runs `action` when the epoch is lost (at once if it was).
    func onLoss(_ action: @escaping @Sendable () -> Void) {
        let lost = state.withLock { state in
            state.onLoss = action
            return state.lossReason != nil
        }
        if lost { action() }
    }

    /// Loses the epoch for `reason` (the first reason stays).
    func lose(_ reason: String) {
        let action: (@Sendable () -> Void)? = state.withLock { state in
            guard state.lossReason == nil else { return nil }
            state.lossReason = reason
            return state.onLoss
        }
        guard let action else { return }
        node.system.log("job \(job): epoch \(epoch) stops: \(reason); it goes on in the next")
        action()
    }

    /// Fences off `user`'s attempts below `attempt` on every shard; returns its furthest
    /// move on any of them (nil when it made none, or the job is not sharded).
    func fence(user: Int, attempt: Int) async throws -> JobStationShard.LastMove? {
        guard !shards.isEmpty else { return nil }
        do {
            let lasts = try await withThrowingTaskGroup(of: JobStationShard.LastMove?.self) { group in
                for shard in shards {
                    group.addTask { try await withTimeout(seconds: Self.patience) { try await shard.fence(user: user, attempt: attempt) } }
                }
                return try await group.reduce(into: [JobStationShard.LastMove]()) { if let last = $1 { $0.append(last) } }
            }
            return lasts.max { $0.mark.step < $1.mark.step }
        } catch {
            lose("cannot fence user \(user) on every shard: \(error)")
            throw error
        }
    }

    /// Waits until every shard has committed every move it made so far; false (and the
    /// epoch lost) when one cannot.
    func flush() async -> Bool {
        guard !shards.isEmpty else { return true }
        let failures = await withTaskGroup(of: String?.self) { group in
            for (index, shard) in shards.enumerated() {
                group.addTask {
                    do {
                        return try await withTimeout(seconds: Self.patience) { try await shard.flush() } ? nil : "shard \(index) stopped"
                    } catch {
                        let summary = (try? await withTimeout(seconds: 2) { try await shard.summary() }) ?? "no summary"
                        return "shard \(index) on \(self.hosts[index].name): \(error) (\(summary))"
                    }
                }
            }
            return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
        }
        guard failures.isEmpty else {
            lose("cannot commit its moves: \(failures.joined(separator: "; "))")
            return false
        }
        return true
    }

    /// Ends every shard's moves and returns their committed books (nil when the job is
    /// not sharded or the epoch is lost).
    func finish() async -> [StationShardBook]? {
        guard !shards.isEmpty, lossReason == nil else { return nil }
        var books: [StationShardBook] = []
        for (index, shard) in shards.enumerated() {
            guard let book = try? await withTimeout(seconds: Self.patience * 3, operation: { try await shard.finish() }) ?? nil else {
                lose("shard \(index) on \(hosts[index].name) could not commit its last moves")
                return nil
            }
            books.append(book)
        }
        return books
    }

    /// Loses the epoch when a shard's host is dead or gone from the membership, as soon as
    /// the membership says so. A suspect host is waited for: it may answer again.
    func watchHosts() -> Task<Void, Never>? {
        guard !shards.isEmpty else { return nil }
        let node = node
        let hosts = hosts
        // Subscribed before the first look, so no change falls between them.
        let changes = node.membershipEvents()
        return Task { [weak self] in
            /// Whether a host is gone (the epoch is then lost).
            func lostAHost() -> Bool {
                let members = Set(node.members.filter { $0.state == .alive || $0.state == .suspect }.map(\.node)).union([node.system.node])
                guard let host = hosts.first(where: { !members.contains($0) }) else { return false }
                self?.lose("the host of a station shard, \(host.name), is dead or gone")
                return true
            }
            guard !lostAHost() else { return }
            for await _ in changes where lostAHost() { return }
        }
    }
}
