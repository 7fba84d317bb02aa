import Glibc
import SpokesConcurrency
import Synchronization

/// One thread that reads every socket of the process, waiting on all of them at once
/// (`poll`): instead of a thread blocked in `recv` per connection and a thread per UDP
/// port waking every 100 ms to see whether it was stopped. An idle connection costs no
/// thread, and a node with fifty peers as few threads as a node with two (issue 33 §3).
///
/// A watched socket's `readable` runs on this thread each time `poll` finds it readable
/// (bytes, its end or an error), once per round, so a busy socket does not starve the
/// others. It must not block: what it hands its bytes to runs here for every socket.
/// It returns nil to stay watched, or what to run once the reactor has forgotten it.
///
/// Invariant: a watched descriptor is closed only on this thread, once it is no longer
/// watched (``stopWatching(_:then:)``), or after its `readable` said it ended; so the
/// number `poll` is asked about never belongs to a socket opened since under the same
/// number. Each watch has a token of its own, checked before its `readable` runs, so a
/// round's stale entry never reaches a newer watch of a reused number.
final class SocketReactor: Sendable {
    /// The process's reactor; its thread starts with the first watch.
    static let shared = SocketReactor()

    /// What runs when a socket is readable: reads from it into the buffer it is given
    /// (the reactor's, reused); nil to stay watched, else what to run once forgotten.
    typealias Readable = @Sendable (_ buffer: inout [UInt8]) -> (@Sendable () -> Void)?

    private struct Watch {
        let token: UInt64
        let readable: Readable
    }

    private struct State {
        var watched: [Int32: Watch] = [:]
        /// Whether `watched` changed since the thread last built its `pollfd` list.
        var changed = false
        var removals: [(descriptor: Int32, then: @Sendable () -> Void)] = []
        var nextToken: UInt64 = 1
        var started = false
    }

    private let state = Mutex(State())
    /// A connected pair of local sockets: a byte written to `wakeWriter` ends the
    /// thread's `poll`, so a new watch or a removal is taken at once.
    private let wakeReader: Int32
    private let wakeWriter: Int32

    /// The largest read: a UDP datagram's largest payload fits, and a stream reads
    /// this much per round.
    static let bufferSize = 65_537

    private init() {
        var pair: [Int32] = [-1, -1]
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        // Without it the process has no descriptor left, and no socket could be read.
        precondition(socketpair(AF_UNIX, kind, 0, &pair) == 0, "socketpair for the socket reactor failed: \(String(cString: strerror(errno)))")
        wakeReader = pair[0]
        wakeWriter = pair[1]
    }

    /// Watches `descriptor` until its `readable` says it ended or ``stopWatching(_:then:)``.
    func watch(_ descriptor: Int32, readable: @escaping Readable) {
        let starts = state.withLock { state in
            state.watched[descriptor] = Watch(token: state.nextToken, readable: readable)
            state.nextToken += 1
            state.changed = true
            defer { state.started = true }
            return !state.started
        }
        if starts { PlainThread.start(name: "spokes.sockets") { [self] in run() } }
        wake()
    }

    /// Stops watching `descriptor`, then runs `then` (its close), both on the reactor's
    /// thread: never while its `readable` runs.
    func stopWatching(_ descriptor: Int32, then: @escaping @Sendable () -> Void) {
        state.withLock { $0.removals.append((descriptor, then)) }
        wake()
    }

    /// Closes `descriptor`: here when the reactor does not watch it, else on the
    /// reactor's thread once it stopped watching it.
    func close(_ descriptor: Int32, watched: Bool) {
        if watched {
            stopWatching(descriptor) { _ = Glibc.close(descriptor) }
        } else {
            Glibc.close(descriptor)
        }
    }

    private func wake() {
        var byte: UInt8 = 1
        // A full pair means a wake-up is already waiting.
        _ = send(wakeWriter, &byte, 1, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: Self.bufferSize)
        var polled: [pollfd] = []
        var tokens: [UInt64] = []
        var drained = [UInt8](repeating: 0, count: 256)
        while true {
            let (removals, snapshot) = state.withLock { state -> ([(descriptor: Int32, then: @Sendable () -> Void)], [(Int32, UInt64)]?) in
                let removals = state.removals
                state.removals = []
                for removal in removals where state.watched.removeValue(forKey: removal.descriptor) != nil { state.changed = true }
                guard state.changed else { return (removals, nil) }
                state.changed = false
                return (removals, state.watched.map { ($0.key, $0.value.token) })
            }
            for removal in removals { removal.then() }
            if let snapshot {
                polled = [pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0)] + snapshot.map { pollfd(fd: $0.0, events: Int16(POLLIN), revents: 0) }
                tokens = [0] + snapshot.map(\.1)
            }
            for index in polled.indices { polled[index].revents = 0 }
            // EINTR (a signal) or a transient failure: the list is polled again.
            guard poll(&polled, nfds_t(polled.count), -1) > 0 else { continue }
            if polled[0].revents != 0 {
                while drained.withUnsafeMutableBytes({ recv(wakeReader, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
            }
            for index in polled.indices.dropFirst() where polled[index].revents != 0 {
                let descriptor = polled[index].fd
                guard let watch = state.withLock({ $0.watched[descriptor] }), watch.token == tokens[index] else { continue }
                guard let ended = watch.readable(&buffer) else { continue }
                state.withLock { state in
                    if state.watched[descriptor]?.token == watch.token {
                        state.watched[descriptor] = nil
                        state.changed = true
                    }
                }
                ended()
            }
        }
    }
}
