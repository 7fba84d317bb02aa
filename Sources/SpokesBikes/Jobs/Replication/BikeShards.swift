import Distributed
import Foundation
import SpokesCluster
import SpokesConcurrency
import SpokesReplication
import Synchronization

/// The shards of sharded bike jobs that this node hosts (issue 19, "spread the load"):
/// each shard is a Raft group `bikeshard-JOB-K` of its host and `jobs.replicas` minus
/// one other members, its state a ``StationShardMachine``. The host answers the shard's
/// moves (``JobStationShard``) and commits them as ``ShardCommitOrder`` allows: never
/// before the move each follows, nor while its station could leave its range.
///
/// The job's coordinator chooses the hosts and opens the shards through each host's
/// ``BikeShardService``; when a host dies, the coordinator opens every shard again under
/// the job's next epoch from its committed state (``ReplicatedBikeJobs``).
public final class BikeShards: Sendable {
    /// The kind of station shard groups, for `RaftHost`'s machine factories.
    public static let groupKind = "bikeshard"

    /// The group of shard `shard` of `job`.
    public static func group(of job: String, shard: Int) -> String { "\(groupKind)-\(job)-\(shard)" }

    /// A shard could not be opened or taken over here.
    public struct Unavailable: Error, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    private struct Hosted: Sendable {
        var epoch: Int
        var ledger: StationShardLedger
        var actor: JobStationShard
        var committer: Task<Void, Never>
    }

    let groups: JobGroups
    private var host: RaftHost { groups.host }
    private var system: ClusterSystem { groups.system }
    /// What this node hosts, by `JOB#SHARD`.
    private let hosted = Mutex<[String: Hosted]>([:])
    /// When to look up the jobs of the shard groups this node leads and does not host.
    private let orphans = Mutex(OrphanShardCheck())

    /// `members` are the node's members now (the node passes them, weakly held).
    public init(host: RaftHost, system: ClusterSystem, members: @escaping @Sendable () -> [Member]) {
        groups = JobGroups(host: host, system: system, members: members)
    }

    /// Hosts shard `shard` of `job` in `epoch`, with `hosts` the hosts of all the job's
    /// shards in this epoch (a move here waits for the moves it follows on theirs), and
    /// returns the shard's committed book.
    ///
    /// In epoch 0 the shard's group is made, on this node (its first leader) and the
    /// other `replicas`, starting from `start`. In a later epoch this node must hold a
    /// replica of the group: it commits the epoch first (a host of an earlier epoch can
    /// commit nothing more) and starts from the committed book.
    public func open(job: String, shard: Int, epoch: Int, start: StationShardBook?, replicas: [String], hosts: [NodeID]) async throws -> StationShardBook {
        let id = Self.group(of: job, shard: shard)
        let system = system
        let book: StationShardBook
        if let start {
            let peers = groups.aliveMembers.map(\.node).filter { replicas.contains($0.name) && $0 != system.node }
            try await groups.open(id, for: job, with: peers, machine: StationShardMachine(), first: StationShardMachine.start(start))
            book = start
        } else {
            book = try await takeOver(id, epoch: epoch)
        }
        let ledger = StationShardLedger(book: book, epoch: epoch)
        let actor = ClusterSystem.withWellKnownName(JobStationShard.name(job: job, epoch: epoch, shard: shard)) {
            JobStationShard(actorSystem: system, ledger: ledger)
        }
        let committer = commit(ledger, of: job, group: id, hosts: hosts)
        let replaced = hosted.withLock { hosted in
            defer { hosted["\(job)#\(shard)"] = Hosted(epoch: epoch, ledger: ledger, actor: actor, committer: committer) }
            return hosted["\(job)#\(shard)"]
        }
        if let replaced {
            replaced.ledger.fail()
            replaced.committer.cancel()
        }
        system.log("job \(job): hosting station shard \(shard) in epoch \(epoch) (\(book.stations.count) stations, its last committed event \(book.applied))")
        return book
    }

    /// Commits `epoch` to group `id` (held here) and returns its book as of then.
    private func takeOver(_ id: String, epoch: Int) async throws -> StationShardBook {
        guard host.groupIDs.contains(id) else { throw Unavailable(reason: "\(system.node.name) holds no replica of \(id)") }
        let commit: RaftCommit
        do {
            commit = try await groups.proposeWhileElecting(StationShardMachine.takeOver(epoch: epoch), to: id)
        } catch {
            throw Unavailable(reason: "cannot commit epoch \(epoch) to \(id): \(error)")
        }
        guard commit.result == StationShardMachine.applied else { throw Unavailable(reason: "\(id) refused epoch \(epoch): \(commit.result)") }
        // This replica applies the epoch after the leader committed it.
        let runtime = system.runtime
        let deadline = runtime.now + 5
        while true {
            if let machine = await host.stateMachine(of: id) as? StationShardMachine, machine.epoch >= epoch {
                guard machine.epoch == epoch, let book = machine.book else { throw Unavailable(reason: "\(id) is in epoch \(machine.epoch), not \(epoch)") }
                return book
            }
            guard runtime.now < deadline else { throw Unavailable(reason: "\(id) did not apply epoch \(epoch) here within 5 s") }
            try await runtime.sleep(for: 0.02)
        }
    }

    /// Commits the shard's events as ``ShardCommitOrder`` allows, until the ledger is
    /// closed and drained or a commit fails (then the ledger fails: another host has the
    /// shard, or the group lost its majority). A batch its group could not commit (an
    /// election) is proposed again; its events carry their numbers, so each applies once.
    private func commit(_ ledger: StationShardLedger, of job: String, group id: String, hosts: [NodeID]) -> Task<Void, Never> {
        let groups = groups
        let system = system
        let epoch = ledger.epoch
        let shard = ledger.shard
        return Task {
            var known: [Int: ShardCommits] = [:]
            func stop(_ reason: String) {
                system.log("job \(job): station shard \(shard) stops in epoch \(epoch): \(reason)")
                ledger.fail()
            }
            /// The shard that made the move `position` names, in this epoch (nil for a
            /// move of an earlier epoch: it was lost at a take-over).
            func shardThatMade(_ position: StationShardBook.Position) -> JobStationShard? {
                guard position.epoch == epoch, hosts.indices.contains(position.shard) else { return nil }
                return try? JobStationShard.at(hosts[position.shard], job: job, epoch: epoch, shard: position.shard, using: system)
            }
            let runtime = system.runtime
            var lastProposal = runtime.now - Self.commitWindow
            for await _ in ledger.newEvents {
                while !Task.isCancelled {
                    // Group commit: a batch gathers the moves of a window, unless half a
                    // batch waits already.
                    let since = runtime.now - lastProposal
                    if since < Self.commitWindow, ledger.pendingCount < BikeJob.eventsPerCommit / 2 {
                        ledger.note("gathering events")
                        try? await runtime.sleep(for: Self.commitWindow - since)
                    }
                    ledger.note("taking events")
                    let (events, seqs, outcomes, waitsFor) = ledger.takeCommittable(limit: BikeJob.eventsPerCommit, known: known)
                    if !events.isEmpty {
                        ledger.note("proposing \(events.count) events")
                        lastProposal = runtime.now
                        let commit: RaftCommit
                        do {
                            commit = try await groups.proposeWhileElecting(StationShardMachine.record(events, seqs: seqs, outcomes: outcomes, epoch: epoch), to: id)
                        } catch {
                            return stop("cannot commit (\(error))")
                        }
                        guard commit.result == StationShardMachine.applied else { return stop("its replicas refused a batch (\(commit.result))") }
                        ledger.committed(seqs)
                        // Moves ready here must not starve the ones waiting on another
                        // shard: learn what it committed meanwhile (without waiting).
                        if let waitsFor, let other = shardThatMade(waitsFor),
                           let commits = try? await withTimeout(seconds: 2, operation: { try await other.commits() }) {
                            known[waitsFor.shard, default: ShardCommits()].formUnion(commits)
                        }
                        continue
                    }
                    guard let waitsFor else { break }
                    ledger.note("waiting for \(waitsFor)")
                    guard let other = shardThatMade(waitsFor),
                          let commits = (try? await withTimeout(seconds: Self.dependencyPatience) { try await other.awaitCommitted(waitsFor.seq) }) ?? nil
                    else { return stop("the move one of its moves follows (\(waitsFor)) was not committed") }
                    // Everything committed there so far, not only the one awaited: the next
                    // batch here is as long as it can be.
                    known[waitsFor.shard, default: ShardCommits()].formUnion(commits)
                }
                ledger.note("idle")
                if Task.isCancelled { return ledger.note("cancelled") }
                // Closed and drained: the shard is done here. Its group is marked finished
                // once the job's own finish is committed (``stopHosting(_:)``), never
                // before, so a job taken over after its shards closed still finds them.
                if ledger.stop == .closed, ledger.isDrained { return ledger.note("done") }
            }
        }
    }

    /// Seconds a shard's committer waits between two proposals while less than half a
    /// batch is waiting: at time scale 0 its commits were a dozen moves each, and each
    /// proposal costs both replicas the same work whatever its size (10 ms: a fifth of the
    /// proposals, and the job's median 15% shorter, `TIME_SCALE=0 Scripts/bench-shards`).
    static let commitWindow = 0.01

    /// Seconds a shard waits for another shard to commit a move one of its moves follows,
    /// before it stops (the other's host is gone or cut off: the coordinator starts the
    /// job's next epoch).
    static let dependencyPatience = 10.0

    /// Stops hosting `job`'s shards here, its finish committed: marks their groups
    /// finished (their replicas remove them later), best effort.
    public func stopHosting(_ job: String) async {
        let stopped = hosted.withLock { hosted in
            let keys = hosted.keys.filter { $0.hasPrefix(job + "#") }
            defer { for key in keys { hosted[key] = nil } }
            return keys.compactMap { key in hosted[key].map { (key, $0) } }
        }
        for (key, entry) in stopped {
            entry.ledger.close()
            entry.ledger.finishRecording()
            guard let hash = key.lastIndex(of: "#"), let shard = Int(key[key.index(after: hash)...]) else { continue }
            _ = try? await host.propose(group: Self.group(of: job, shard: shard), command: StationShardMachine.finish)
        }
    }

    /// Stops hosting `job`'s shards here and on `hosts` once its finish is committed, best effort.
    public func stopHostingEverywhere(_ job: String, hosts: [NodeID]) async {
        let system = system
        for host in Set(hosts) {
            guard host != system.node else {
                await stopHosting(job)
                continue
            }
            guard let service = try? BikeShardService.at(host, using: system) else { continue }
            _ = try? await withTimeout(seconds: 2) { try await service.stopHosting(job: job) }
        }
    }

    /// Watches the shard groups this node holds (``JobGroups/watch(kind:job:isRunning:abandon:takeOver:)``)
    /// so finished ones are removed; their coordinator, not the group, takes a shard over.
    /// A group this node leads whose job has ended, or that no node has known for a while
    /// (``OrphanShardCheck``; `lookUp` asks the cluster where the job is), is an orphan:
    /// this node stops hosting its shard, if it does, and marks the group finished, so its
    /// replicas remove it.
    public func watch(lookUp: @escaping @Sendable (_ job: String) async -> OrphanShardCheck.Fate) -> Task<Void, Never> {
        groups.watch(
            kind: Self.groupKind,
            job: { id, machine in
                // A finished group names no job: its replicas remove it without asking.
                (machine as? StationShardMachine).map {
                    JobGroups.JobState(job: $0.book == nil || $0.finished ? nil : Self.job(ofGroup: id), finished: $0.finished)
                }
            },
            isRunning: { [weak self] job in
                guard let self else { return true }
                guard self.orphans.withLock({ $0.shouldAsk(about: job, at: self.system.runtime.now) }) else { return true }
                let fate = await lookUp(job)
                return !self.orphans.withLock { $0.found(fate, for: job, at: self.system.runtime.now) }
            },
            abandon: { _ in },
            takeOver: { [weak self] _, status in
                guard let self, let job = Self.job(ofGroup: status.group) else { return }
                self.system.log("job \(job): station shard group \(status.group) outlived its job (it ended, or no node has known it for \(Int(self.orphans.withLock { $0.patience })) s): marking it finished")
                // Hosted here still (its coordinator died before telling the hosts): stop.
                await self.stopHosting(job)
                _ = try? await self.host.propose(group: status.group, command: StationShardMachine.finish)
                self.orphans.withLock { $0.forget(job) }
            })
    }

    /// The job of shard group `id` (`bikeshard-JOB-K`).
    static func job(ofGroup id: String) -> String? {
        guard id.hasPrefix(groupKind + "-"), let dash = id.lastIndex(of: "-") else { return nil }
        let job = id[id.index(id.startIndex, offsetBy: groupKind.count + 1)..<dash]
        return job.isEmpty ? nil : String(job)
    }

}

/// A node's door to the station shards it hosts: a sharded job's coordinator asks it
/// to host a shard (``BikeShards/open(job:shard:epoch:start:replicas:hosts:)``).
public distributed actor BikeShardService {
    public typealias ActorSystem = ClusterSystem

    /// The service's well-known name on every node.
    public static let wellKnownName = "bikes.shards"

    private let shards: BikeShards

    public init(actorSystem: ClusterSystem, shards: BikeShards) {
        self.actorSystem = actorSystem
        self.shards = shards
    }

    /// The service on `node`.
    public static func at(_ node: NodeID, using system: ClusterSystem) throws -> BikeShardService {
        try resolve(id: ActorID(node: node, name: wellKnownName), using: system)
    }

    /// Hosts shard `shard` of `job` in `epoch` here; returns its committed book.
    public distributed func open(
        job: String, shard: Int, epoch: Int, start: StationShardBook?, replicas: [String], hosts: [NodeID]
    ) async throws -> StationShardBook {
        try await shards.open(job: job, shard: shard, epoch: epoch, start: start, replicas: replicas, hosts: hosts)
    }

    /// Stops hosting `job`'s shards here, its finish committed.
    public distributed func stopHosting(job: String) async {
        await shards.stopHosting(job)
    }
}
