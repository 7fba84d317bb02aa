import SpokesCluster
import Synchronization

/// A worker node's sender of one bike job's station moves to the coordinator's
/// ``JobStationDesk``: the users of the job running on this node hand it their moves,
/// and it sends them as few calls carrying many moves.
///
/// When no call of it is in flight (the link is idle), a move goes at once, alone: it
/// waits for nothing. While calls are in flight, moves gather and go together when the
/// oldest call's reply comes back (the batcher's tick is the round trip), or sooner, in
/// a further call, once ``movesPerCall`` are waiting and fewer than ``callsInFlight``
/// calls are out. Each user waits for its own move's outcome, which the reply carries:
/// a refusal comes back as the same error a call of its own would have thrown
/// (``RemoteCallError/remoteError(type:message:node:)``), and a failed call fails every
/// move it carried. A user cancelled while it waits stops waiting at once; its move may
/// still be applied, as a cancelled call of its own may be (the ledger makes a repeat
/// harmless).
final class MoveBatcher: Sendable {
    /// Moves in one call, at most.
    static let movesPerCall = 512
    /// Calls out at once, at most.
    static let callsInFlight = 4

    /// Calls sent and moves they carried, so far.
    struct Sent: Sendable, Equatable {
        var calls = 0
        var moves = 0
    }

    private struct Waiting {
        var id: UInt64
        var move: StationMove
    }

    private struct State {
        var queue: [Waiting] = []
        var waiters: [UInt64: CheckedContinuation<Bool, any Error>] = [:]
        var nextID: UInt64 = 0
        var inFlight = 0
        var sent = Sent()

        /// The next call's moves, if one may go now (and counts it as in flight).
        mutating func nextCall() -> [Waiting]? {
            guard !queue.isEmpty, inFlight == 0 || (queue.count >= MoveBatcher.movesPerCall && inFlight < MoveBatcher.callsInFlight) else {
                return nil
            }
            let call = Array(queue.prefix(MoveBatcher.movesPerCall))
            queue.removeFirst(call.count)
            inFlight += 1
            sent.calls += 1
            sent.moves += call.count
            return call
        }
    }

    private let desk: JobStationDesk
    private let state = Mutex(State())

    init(desk: JobStationDesk) {
        self.desk = desk
    }

    /// Calls sent and moves they carried, so far.
    var sent: Sent { state.withLock { $0.sent } }

    /// Sends `move` with the others waiting and returns its outcome: whether the user got
    /// the bike (or the slot).
    func send(_ move: StationMove) async throws -> Bool {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
                // Under the lock the handler below takes too, so the move either waits
                // here or was never queued: the continuation is resumed once.
                let call = state.withLock { state -> [Waiting]? in
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                        return nil
                    }
                    state.waiters[id] = continuation
                    state.queue.append(Waiting(id: id, move: move))
                    return state.nextCall()
                }
                if let call { Task { await self.carry(call) } }
            }
        } onCancel: {
            let continuation = state.withLock { state in
                state.queue.removeAll { $0.id == id }
                return state.waiters.removeValue(forKey: id)
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Sends `call`, answers its moves, and goes on with the moves that gathered meanwhile
    /// until none are waiting.
    private func carry(_ call: [Waiting]) async {
        var call = call
        while true {
            let outcomes: Result<[StationMove.Outcome], any Error>
            do {
                let answered = try await desk.apply(call.map(\.move))
                outcomes = answered.count == call.count
                    ? .success(answered)
                    : .failure(RemoteCallError.serializationFailed("\(desk.id) answered \(answered.count) of \(call.count) moves"))
            } catch {
                outcomes = .failure(error)
            }
            let (waiters, next) = state.withLock { state in
                state.inFlight -= 1
                return (call.map { state.waiters.removeValue(forKey: $0.id) }, state.nextCall())
            }
            let node = desk.id.node.name
            for (index, waiter) in waiters.enumerated() {
                guard let waiter else { continue }
                switch outcomes {
                case .failure(let error): waiter.resume(throwing: error)
                case .success(let outcomes):
                    switch outcomes[index] {
                    case .done(let done): waiter.resume(returning: done)
                    case .refused(let refusal):
                        waiter.resume(throwing: RemoteCallError.remoteError(
                            type: String(describing: type(of: refusal)), message: refusal.description, node: node))
                    }
                }
            }
            guard let next else { return }
            call = next
        }
    }
}

/// A node's ``MoveBatcher``s, one per job desk its users move at, kept while a user of the
/// job runs here. Keyed by the node's system too, so one registry may serve several
/// nodes of one process (the simulator's).
final class MoveBatchers: Sendable {
    private struct Key: Hashable {
        var system: ObjectIdentifier
        var desk: ActorID
    }

    private let batchers = Mutex<[Key: (batcher: MoveBatcher, users: Int)]>([:])

    /// Runs `body` with `system`'s batcher for the desk `desk`, made on first use and
    /// dropped when its last user is done.
    func with<Result>(
        desk: ActorID, on system: ClusterSystem, _ body: (MoveBatcher) async throws -> Result
    ) async throws -> Result {
        let key = Key(system: ObjectIdentifier(system), desk: desk)
        let reference = try JobStationDesk.resolve(id: desk, using: system)
        let batcher = batchers.withLock { batchers in
            if let held = batchers[key] {
                batchers[key]?.users += 1
                return held.batcher
            }
            let batcher = MoveBatcher(desk: reference)
            batchers[key] = (batcher, 1)
            return batcher
        }
        defer {
            batchers.withLock { batchers in
                batchers[key]?.users -= 1
                if batchers[key]?.users == 0 { batchers[key] = nil }
            }
        }
        return try await body(batcher)
    }
}

/// A worker's handle on one station of a job whose moves go through a ``MoveBatcher``.
struct BatchedStationDock: BikeDock {
    typealias Failure = any Error
    let index: Int
    let batcher: MoveBatcher

    var stationID: String { "\(index)" }

    func takeBike(_ move: Move) async throws -> Bool {
        try await batcher.send(StationMove(station: index, take: true, move: move))
    }

    func leaveBike(_ move: Move) async throws -> Bool {
        try await batcher.send(StationMove(station: index, take: false, move: move))
    }
}
