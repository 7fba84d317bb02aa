/// A worker's slots and queues as a pure state machine: which attempts run, which wait,
/// which are turned away, and, when one ends, which waiting attempt takes its place.
/// ``ScanSystem`` is its shell: it parks and resumes the attempts this decides about, and
/// runs them. No clock, no I/O, so every rule is tested without a node and a simulator can
/// run many workers in one process.
///
/// A worker has a budget per ``TaskCost`` (``TaskBudgets``: its cpu slots and its waiting
/// slots) and, beside each, a short queue per job (``queueLength(places:)``: a tenth of
/// the budget, at least one), at most ``queuedJobsLimit`` jobs' worth in all. Every
/// attempt names its job and the job's ``JobShare`` (owner, priority, cap). Rules, for
/// each cost on its own:
/// - an attempt that arrives while the budget has room runs (``Decision/run``);
/// - otherwise it waits in its job's queue (``Decision/wait(_:)``) while that queue and
///   the worker's total have room; a coordinator sends a worker its next task before the
///   current one ends, so a slot never idles for a round trip (Dask's workers keep such
///   a queue); a queue per job means a job that arrives behind another always has a
///   place in line;
/// - when the total is full, an attempt of a job below its fair share takes the place
///   of the newest waiting attempt of the job furthest above its share, which is turned
///   away (``Decision/waitDisplacing(_:displaced:)``); otherwise it is turned away
///   (``Decision/busy``). Busy is not a failure: its coordinator sends it elsewhere or later.
///   Several coordinators may send to one worker, which is why the worker enforces its
///   budgets itself;
/// - when a running attempt ends (``finish(_:job:)``), its place passes to a waiting
///   attempt of the job furthest below its fair share (``FairShare``, over the jobs
///   running or waiting here, demand = running + waiting): the fewest running per slot
///   of share, then the least ``JobState/pass`` + 1 / share (the places it was given
///   here, each counted as 1 / its share then, and the one it would take: fair queuing's
///   virtual finish), then the oldest. So a short job that arrives behind
///   a long one gets its share from the next place that frees, without a central
///   scheduler: every worker decides from the attempts it holds. The pass is what keeps a
///   job of less than one slot's share from being passed over for good: with 2 slots and
///   shares of 2/3, 2/3, 1/3 and 1/3, every job is at 0 running when its turn comes, and
///   a larger share breaking that tie gave the two small jobs nothing
///   (`SharingWithSeveralCoordinatorsTests`); by pass, each gets places in proportion to
///   its share;
/// - a waiting attempt that is cancelled leaves the queue (``withdraw(_:)``) and holds nothing.
///
/// Invariant, per cost: `inUse <= budget`, each job's queue at most
/// `queueLength(places: budget)`, all queues together at most `queuedJobsLimit` times
/// that, and an attempt waits only while the budget is full.
public struct WorkerAdmission: Sendable {
    /// What happens to an attempt that arrives.
    public enum Decision: Sendable, Hashable {
        /// It holds a place now: run it.
        case run
        /// It waits in the queue; ``WorkerAdmission/finish(_:job:)`` names its ticket
        /// when it is given a place.
        case wait(Ticket)
        /// It waits in the queue, in the place of the waiting attempt `displaced`, which
        /// the shell answers busy.
        case waitDisplacing(Ticket, displaced: Ticket)
        /// Budget and queue are full: answer ``TaskResult/busy``.
        case busy
    }

    /// A waiting attempt, in arrival order.
    public struct Ticket: Sendable, Hashable, Comparable {
        public let number: UInt64

        public static func < (lhs: Ticket, rhs: Ticket) -> Bool { lhs.number < rhs.number }
    }

    /// What a worker knows of one job of one cost: its share and its attempts here.
    public struct JobState: Sendable, Hashable {
        public var share: JobShare
        /// Attempts of the job holding a place.
        public var running = 0
        /// Its waiting attempts, oldest first.
        public fileprivate(set) var queue = TicketQueue()
        /// Its virtual time here (start-time fair queuing): each place the job is given
        /// while another job is here adds 1 / its share at that moment. A job that comes
        /// (or comes back) starts at the least pass of the jobs here, so it banks nothing.
        public fileprivate(set) var pass = 0.0
    }

    /// Jobs whose attempts may wait at once, per cost: bounds the queues whatever
    /// coordinators send (each job's queue is short).
    public static let queuedJobsLimit = 16

    /// Places of each cost: how many attempts of it run at once.
    public let budgets: TaskBudgets
    /// Places of each cost held by running attempts (a place passed to a waiting attempt
    /// stays held).
    public private(set) var inUse = TaskBudgets.zero
    /// Jobs with attempts running or waiting, per cost.
    private var cpuJobs: [String: JobState] = [:]
    private var waitingJobs: [String: JobState] = [:]
    /// Which job and cost each waiting ticket belongs to.
    private var waitingTickets: [Ticket: (job: String, cost: TaskCost)] = [:]
    private var queuedCPU = 0
    private var queuedWaiting = 0
    private var nextTicket: UInt64 = 1

    /// Queue places of one job beside a budget of `places`: a tenth of them, at least one
    /// (as Dask saturates a worker at 1.1 x its threads), none beside no budget.
    /// Coordinators compute it from the budgets a member announces, so both sides agree
    /// without asking.
    public static func queueLength(places: Int) -> Int {
        places > 0 ? max(1, places / 10 + (places % 10 == 0 ? 0 : 1)) : 0
    }

    /// A worker with `budgets` (each at least 0) and nothing running.
    public init(budgets: TaskBudgets) {
        self.budgets = TaskBudgets(cpu: max(0, budgets.cpu), waiting: max(0, budgets.waiting))
    }

    /// Queue places of `cost` for one job.
    public func queueLength(_ cost: TaskCost) -> Int { Self.queueLength(places: budgets[cost]) }

    /// Attempts of `cost` waiting now, every job's.
    public func queued(_ cost: TaskCost) -> Int { cost == .cpu ? queuedCPU : queuedWaiting }

    /// Attempts waiting now, of either cost.
    public var queuedTotal: Int { queuedCPU + queuedWaiting }

    /// The jobs with attempts of `cost` running or waiting here.
    public func jobs(_ cost: TaskCost) -> [String: JobState] { cost == .cpu ? cpuJobs : waitingJobs }

    /// Each job's fair share of the `cost` budget, from the attempts running or waiting
    /// here (demand = running + waiting), plus `arriving` more of the job `adding`.
    public func shares(_ cost: TaskCost, adding arriving: (job: String, share: JobShare)? = nil) -> [String: Double] {
        var claims = jobs(cost).map { job, state in
            FairShare.Claim(job: job, owner: state.share.owner, weight: state.share.priority,
                            demand: state.running + state.queue.count + (arriving?.job == job ? 1 : 0), maxSlots: state.share.maxSlots)
        }
        if let arriving, jobs(cost)[arriving.job] == nil {
            claims.append(FairShare.Claim(job: arriving.job, owner: arriving.share.owner, weight: arriving.share.priority, demand: 1,
                                          maxSlots: arriving.share.maxSlots))
        }
        return FairShare.shares(of: budgets[cost], among: claims)
    }

    /// An attempt of `cost` arrives, of one job of unnamed owner (a single job's rules).
    public mutating func arrive(_ cost: TaskCost) -> Decision { arrive(cost, job: "", share: .unnamed) }

    /// An attempt of `cost` of `job`, whose share is `share`, arrives.
    public mutating func arrive(_ cost: TaskCost, job: String, share: JobShare) -> Decision {
        var state = jobs(cost)[job] ?? JobState(share: share, pass: jobs(cost).values.map(\.pass).min() ?? 0)
        state.share = share
        if inUse[cost] < budgets[cost] {
            if jobs(cost).count > (jobs(cost)[job] == nil ? 0 : 1) {
                state.pass += 1 / max(shares(cost, adding: (job, share))[job] ?? 0, 1e-9)
            }
            inUse[cost] += 1
            state.running += 1
            setJob(job, state, cost)
            return .run
        }
        guard state.queue.count < queueLength(cost) else { return .busy }
        if queued(cost) < queueLength(cost) * Self.queuedJobsLimit {
            let ticket = enqueue(job: job, state: &state, cost)
            setJob(job, state, cost)
            return .wait(ticket)
        }
        // Every queue place is taken: one of a job above its share may be given up.
        let shares = shares(cost, adding: (job, share))
        let mine = Double(state.running + state.queue.count)
        guard mine < (shares[job] ?? 0) else { return .busy }
        let over = jobs(cost).filter { other, held in
            other != job && held.queue.count > 0 && Double(held.running + held.queue.count) > (shares[other] ?? 0)
        }
        guard let victim = over.max(by: { excess($0.value, shares[$0.key]) < excess($1.value, shares[$1.key]) || (excess($0.value, shares[$0.key]) == excess($1.value, shares[$1.key]) && $0.key > $1.key) }),
              let displaced = removeNewest(of: victim.key, cost)
        else { return .busy }
        let ticket = enqueue(job: job, state: &state, cost)
        setJob(job, state, cost)
        return .waitDisplacing(ticket, displaced: displaced)
    }

    /// A running attempt of `cost` of one job of unnamed owner ended.
    public mutating func finish(_ cost: TaskCost) -> Ticket? { finish(cost, job: "")?.ticket }

    /// A running attempt of `cost` of `job` ended. Returns the waiting attempt that takes
    /// its place (one of the job furthest below its share) and its job, or nil when none
    /// waits and the place is free.
    public mutating func finish(_ cost: TaskCost, job: String) -> (ticket: Ticket, job: String)? {
        if var state = jobs(cost)[job] {
            state.running = max(0, state.running - 1)
            setJob(job, state, cost)
        }
        inUse[cost] = max(0, inUse[cost] - 1)
        let candidates = jobs(cost).filter { $0.value.queue.count > 0 }
        // One job here (the common case): it goes next, whatever the shares.
        let shares = jobs(cost).count > 1 ? shares(cost) : [:]
        // Fewest running per slot of share; among equals the least virtual finish (pass
        // and this place: the job served least here for its share), then the oldest.
        guard let next = candidates.min(by: { a, b in
            let sa = shares[a.key] ?? 0, sb = shares[b.key] ?? 0
            let ra = Double(a.value.running) / max(sa, 1e-9), rb = Double(b.value.running) / max(sb, 1e-9)
            if abs(ra - rb) > 1e-9 { return ra < rb }
            let fa = a.value.pass + 1 / max(sa, 1e-9), fb = b.value.pass + 1 / max(sb, 1e-9)
            if abs(fa - fb) > 1e-9 { return fa < fb }
            return a.value.queue.first! < b.value.queue.first!
        }) else { return nil }
        var state = next.value
        guard let ticket = state.queue.removeFirst() else { return nil }
        waitingTickets[ticket] = nil
        adjustQueued(cost, by: -1)
        if !shares.isEmpty { state.pass += 1 / max(shares[next.key] ?? 0, 1e-9) }
        state.running += 1
        inUse[cost] += 1
        setJob(next.key, state, cost)
        return (ticket, next.key)
    }

    /// A waiting attempt gave up (it was cancelled). True when it was waiting and has now
    /// left the queue; false when it was not (it already has a place, or never waited).
    public mutating func withdraw(_ ticket: Ticket) -> Bool {
        guard let owner = waitingTickets.removeValue(forKey: ticket), var state = jobs(owner.cost)[owner.job],
              state.queue.remove(ticket)
        else { return false }
        adjustQueued(owner.cost, by: -1)
        setJob(owner.job, state, owner.cost)
        return true
    }

    /// How far a job's attempts here are above its share, per slot of share.
    private func excess(_ state: JobState, _ share: Double?) -> Double {
        Double(state.running + state.queue.count) / max(share ?? 0, 1e-9)
    }

    private mutating func enqueue(job: String, state: inout JobState, _ cost: TaskCost) -> Ticket {
        let ticket = Ticket(number: nextTicket)
        nextTicket += 1
        state.queue.append(ticket)
        waitingTickets[ticket] = (job, cost)
        adjustQueued(cost, by: 1)
        return ticket
    }

    private mutating func removeNewest(of job: String, _ cost: TaskCost) -> Ticket? {
        guard var state = jobs(cost)[job], let ticket = state.queue.last, state.queue.remove(ticket) else { return nil }
        waitingTickets[ticket] = nil
        adjustQueued(cost, by: -1)
        setJob(job, state, cost)
        return ticket
    }

    private mutating func adjustQueued(_ cost: TaskCost, by delta: Int) {
        if cost == .cpu { queuedCPU += delta } else { queuedWaiting += delta }
    }

    /// Keeps a job's state, or forgets the job once nothing of it runs or waits here.
    private mutating func setJob(_ job: String, _ state: JobState, _ cost: TaskCost) {
        let kept: JobState? = state.running == 0 && state.queue.count == 0 ? nil : state
        if cost == .cpu { cpuJobs[job] = kept } else { waitingJobs[job] = kept }
    }
}

/// Tickets in arrival order: appends and removals from the front in constant time
/// (amortised), so a queue of a hundred thousand waiting attempts stays cheap.
public struct TicketQueue: Sendable, Hashable {
    private var items: [WorkerAdmission.Ticket] = []
    private var head = 0

    /// Tickets waiting.
    public var count: Int { items.count - head }
    /// The oldest.
    public var first: WorkerAdmission.Ticket? { head < items.count ? items[head] : nil }
    /// The newest.
    public var last: WorkerAdmission.Ticket? { head < items.count ? items.last : nil }

    mutating func append(_ ticket: WorkerAdmission.Ticket) { items.append(ticket) }

    mutating func removeFirst() -> WorkerAdmission.Ticket? {
        guard head < items.count else { return nil }
        let first = items[head]
        head += 1
        if head > 64, head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return first
    }

    /// Removes `ticket` wherever it waits; false when it is not here.
    mutating func remove(_ ticket: WorkerAdmission.Ticket) -> Bool {
        guard let index = items[head...].firstIndex(of: ticket) else { return false }
        items.remove(at: index)
        return true
    }
}
