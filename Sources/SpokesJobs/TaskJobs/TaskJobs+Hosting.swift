import SpokesCluster
import SpokesConcurrency

extension TaskJobs {
    /// Hosts `node`'s desk for jobs of tasks (well-known name `taskjobs`), which stores
    /// their reports in `history` (`spokes node`: the job store) and keeps running jobs in
    /// `durability` (the `journal` when none is given), and returns it; the node keeps it
    /// alive. The jobs the `journal` holds from before a crash run on from there at once
    /// (their tasks spread as peers are found; tried again every 2 s for 20 s while no
    /// alive node runs their kind). It runs the jobs of `workloads` too (their groups'
    /// machines must know the same: ``ReplicatedTaskJobs/machines(workloads:)``).
    @discardableResult
    public static func host(
        on node: ClusterNode, history: any TaskJobHistory = InMemoryTaskJobHistory(), durability: (any TaskJobDurability)? = nil,
        journal: TaskJobJournal? = nil, workloads: JobWorkloads = JobWorkloads()
    ) -> TaskJobs {
        let system = node.system
        let desk = ClusterSystem.withWellKnownName(wellKnownName) {
            TaskJobs(actorSystem: system, node: node, history: history, durability: durability ?? journal, workloads: workloads)
        }
        node.keep(desk)
        guard let journal else { return desk }
        node.adopt(Task {
            var waiting = await runBlocking("spokes.job-journal") { journal.unfinished() }
            for _ in 0..<10 where !waiting.isEmpty && !Task.isCancelled {
                var still: [TaskJobJournal.Unfinished] = []
                for job in waiting {
                    do {
                        try await desk.whenLocal { try await $0.resume(job.spec, ended: job.ends) }
                    } catch {
                        system.log("cannot resume job \(job.spec.id) from this node's journal yet: \(error)")
                        still.append(job)
                    }
                }
                waiting = still
                if !waiting.isEmpty { try? await system.runtime.sleep(for: 2) }
            }
        })
        return desk
    }

    /// The desk `node` hosts, if the job layer hosted one there.
    public static func hosted(on node: ClusterNode) -> TaskJobs? {
        try? resolve(id: ActorID(node: node.system.node, name: wellKnownName), using: node.system)
    }
}
