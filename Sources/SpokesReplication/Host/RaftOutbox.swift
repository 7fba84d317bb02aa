import SpokesCluster
import SpokesConsensus
import Synchronization

/// Messages on their way to other nodes: one queue per peer, drained by one call at a
/// time (so a peer gets a group's messages in the order they were sent, and a slow peer
/// delays only its own queue). Every group's messages to a peer share its calls. A
/// queue holds at most `maximumQueuedMessages` (oldest dropped); a call that fails, or a
/// peer that is not connected, loses its messages: Raft resends what matters.
final class RaftOutbox: Sendable {
    private struct Queue {
        var envelopes: [RaftEnvelope] = []
        var count = 0
        var sending = false
    }

    private let system: ClusterSystem
    private let settings: RaftHostSettings
    private let queues = Mutex<[String: Queue]>([:])
    private let dropped = Atomic<Int>(0)

    init(system: ClusterSystem, settings: RaftHostSettings) {
        self.system = system
        self.settings = settings
    }

    /// Messages dropped so far (queue full, peer unreachable, call failed).
    var droppedMessages: Int { dropped.load(ordering: .relaxed) }

    func send(_ messages: [RaftMessage], of group: String, to peer: String) {
        guard !messages.isEmpty else { return }
        let limit = settings.maximumQueuedMessages
        let (start, overflow): (Bool, Int) = queues.withLock { queues in
            var queue = queues[peer, default: Queue()]
            if queue.envelopes.last?.group == group {
                queue.envelopes[queue.envelopes.count - 1].messages += messages
            } else {
                queue.envelopes.append(RaftEnvelope(group: group, messages: messages))
            }
            queue.count += messages.count
            var overflow = 0
            while queue.count > limit, !queue.envelopes.isEmpty {
                let excess = queue.count - limit
                if queue.envelopes[0].messages.count <= excess {
                    let first = queue.envelopes.removeFirst()
                    queue.count -= first.messages.count
                    overflow += first.messages.count
                } else {
                    queue.envelopes[0].messages.removeFirst(excess)
                    queue.count -= excess
                    overflow += excess
                }
            }
            let start = !queue.sending
            queue.sending = true
            queues[peer] = queue
            return (start, overflow)
        }
        if overflow > 0 { dropped.add(overflow, ordering: .relaxed) }
        // On the protocol thread, as are its calls (the `raft` endpoint's; see RaftHost).
        if start { system.runtime.protocolTask { [self] in await drain(peer) } }
    }

    /// Sends `peer`'s queue, one call at a time, until it is empty.
    private func drain(_ peer: String) async {
        while let batch = takeBatch(for: peer) {
            let count = batch.reduce(0) { $0 + $1.messages.count }
            guard let node = system.connectedNode(named: peer) else {
                dropped.add(count, ordering: .relaxed)
                continue
            }
            do {
                let endpoint = try RaftEndpoint.resolve(id: ActorID(node: node, name: RaftEndpoint.wellKnownName), using: system)
                try await endpoint.deliver(batch, from: system.node.name)
            } catch {
                dropped.add(count, ordering: .relaxed)
                system.log("raft: \(count) messages to \(peer) lost: \(error)", level: .debug)
            }
        }
    }

    /// The next call's envelopes (about `maximumCallBytes` and at most
    /// `maximumCallMessages`, one message always), or nil when the queue is empty (and
    /// then nobody drains it until the next `send`).
    private func takeBatch(for peer: String) -> [RaftEnvelope]? {
        queues.withLock { queues in
            guard var queue = queues[peer] else { return nil }
            guard !queue.envelopes.isEmpty else {
                queue.sending = false
                queues[peer] = queue
                return nil
            }
            let batch = Self.takeBatch(from: &queue.envelopes, maximumBytes: settings.maximumCallBytes, maximumMessages: settings.maximumCallMessages)
            let count = batch.reduce(0) { $0 + $1.messages.count }
            queue.count -= count
            queues[peer] = queue
            return batch
        }
    }

    /// Takes the next call's envelopes from the front of `envelopes`: about `maximumBytes`
    /// and at most `maximumMessages` messages, one message always; an envelope that does
    /// not fit whole is split (its first messages go, the rest stay first in line).
    static func takeBatch(from envelopes: inout [RaftEnvelope], maximumBytes: Int, maximumMessages: Int) -> [RaftEnvelope] {
        var batch: [RaftEnvelope] = []
        var bytes = 0
        var count = 0
        while let first = envelopes.first {
            var envelope = first
            let room = maximumMessages - count
            if envelope.messages.count > room { envelope.messages = Array(envelope.messages.prefix(room)) }
            // An envelope's messages are bounded by bytes too (one always goes): a
            // group's pipelined appends of large entries, or a snapshot's chunks, must
            // not add up to a call larger than a frame (review, issue 29 §1.5).
            var fitting = 0
            var fittingBytes = envelope.group.utf8.count
            for message in envelope.messages {
                let size = RaftEnvelope.approximateSize(of: message)
                if fitting > 0, bytes + fittingBytes + size > maximumBytes { break }
                fitting += 1
                fittingBytes += size
            }
            if fitting < envelope.messages.count { envelope.messages = Array(envelope.messages.prefix(fitting)) }
            let size = envelope.approximateSize
            if count > 0, bytes + size > maximumBytes || room == 0 { break }
            if envelope.messages.count == first.messages.count {
                envelopes.removeFirst()
            } else {
                envelopes[0].messages.removeFirst(envelope.messages.count)
            }
            batch.append(envelope)
            bytes += size
            count += envelope.messages.count
        }
        return batch
    }
}
