/// TCP and UDP as a node's shells use them: the network part of a ``Runtime``.
/// ``SocketNetwork`` is the machine's sockets; ``SimulatedNetwork`` holds every node of a
/// test or a simulation in one process, with partitions, loss and delay it controls.
///
/// A write that may block (``ByteStream/write(_:)`` where ``ByteStream/writesWait``) is
/// made off the cooperative pool (a connection's write thread); the callbacks
/// (`onAccept`, `onBytes`, `onDatagram`) run on a thread or task of the network's own,
/// one at a time per stream or port, in order. `onBytes`, `onEnd` and `onDatagram` must
/// not block: the machine's network reads every socket of the process on one thread.
public protocol RuntimeNetwork: Sendable {
    /// Listens for streams on `address` (port 0 picks a free one).
    func listen(on address: SocketAddress) throws(TransportError) -> any StreamListener
    /// Opens a stream to `address`, giving up after `timeout` seconds. A socket's connect
    /// waits on a thread of its own, never on the cooperative pool.
    func connect(to address: SocketAddress, timeout: Double) async throws -> any ByteStream
    /// Binds a datagram port on `address`. `shared` ports (discovery's) may be bound by
    /// several nodes of one machine at once and receive broadcasts.
    func bindDatagrams(on address: SocketAddress, shared: Bool) throws(TransportError) -> any DatagramPort
}

/// A listening stream socket.
public protocol StreamListener: Sendable {
    /// The address actually bound.
    var address: SocketAddress { get }
    /// Hands every accepted stream to `onAccept` until ``stop()``.
    func start(onAccept: @escaping @Sendable (any ByteStream) -> Void)
    /// Stops accepting; the address is free again.
    func stop()
}

/// One end of a reliable, ordered byte stream (a TCP connection).
///
/// The contract: ``startReading(onBytes:onEnd:)`` delivers every chunk in order, one
/// call at a time, then `onEnd` exactly once. ``shutdown()`` ends both directions at
/// once: a waiting read ends, the peer reads the end of the stream after what was
/// written before, and later writes fail. ``close()`` frees the stream once reading has
/// ended and the last write returned.
public protocol ByteStream: AnyObject, Sendable {
    /// The peer's address.
    var remoteAddress: SocketAddress { get }
    /// True when ``write(_:)`` may block its thread (a socket's does, while the peer is
    /// slow to read), so writers need a thread of their own; false when it only queues
    /// (the simulator's), so a writer may write in place.
    var writesWait: Bool { get }
    /// Starts reading. `onBytes` gets each chunk and returns false to stop reading;
    /// `onEnd` then runs once, with how reading ended.
    func startReading(onBytes: @escaping @Sendable (ArraySlice<UInt8>) -> Bool, onEnd: @escaping @Sendable (StreamEnd) -> Void)
    /// Writes all of `bytes`, blocking the calling thread until the network took them;
    /// false once the stream is broken. One writer at a time.
    func write(_ bytes: [UInt8]) -> Bool
    /// Writes what the network takes of `bytes` now, without waiting: the count of bytes
    /// written (0 when it takes none now), or nil once the stream is broken. Safe on any
    /// thread, the cooperative pool's too; one writer at a time, as ``write(_:)``. A
    /// stream whose writes never wait need not implement it (it writes nothing here).
    func writeWithoutWaiting(_ bytes: [UInt8]) -> Int?
    /// Ends both directions now.
    func shutdown()
    /// Ends this end's writing only: the peer reads the end of the stream after what was
    /// written, and reading here goes on (a lingering close, which reads what the peer
    /// still sends rather than answer it with a reset).
    func shutdownWriting()
    /// Bounds what the network holds of this end's unread writes to about `bytes` (a
    /// socket's send buffer), so a peer that stops reading is noticed soon; a stream
    /// without such a buffer (the simulator's) ignores it.
    func limitWriteBuffer(toBytes bytes: Int)
    /// Frees the stream (its descriptor). Call once, after reading ended.
    func close()
}

extension ByteStream {
    /// Writes nothing: a stream whose writes never wait is written with ``write(_:)``.
    public func writeWithoutWaiting(_ bytes: [UInt8]) -> Int? { 0 }

    /// Nothing to bound: the stream has no send buffer of its own.
    public func limitWriteBuffer(toBytes bytes: Int) {}
}

/// How reading a ``ByteStream`` ended.
public enum StreamEnd: Sendable, Equatable {
    /// The peer closed the stream (or this end was shut down).
    case closed
    /// `onBytes` asked to stop.
    case stopped
    /// Receiving failed, with the system's words.
    case failed(String)
}

/// A bound datagram (UDP) port.
public protocol DatagramPort: Sendable {
    /// The address bound.
    var address: SocketAddress { get }
    /// Sends `bytes` to `destination`; a failure is dropped, as a lost datagram is.
    func send(_ bytes: [UInt8], to destination: SocketAddress)
    /// Hands every datagram of at most `maximumSize` bytes (longer ones arrive cut to
    /// `maximumSize + 1`, so the reader can tell) and its source to `onDatagram`, until
    /// ``stop()``.
    func startReceiving(maximumSize: Int, onDatagram: @escaping @Sendable (ArraySlice<UInt8>, SocketAddress) -> Void)
    /// Stops receiving and frees the port (on a machine, once the reactor's thread
    /// has let go of it).
    func stop()
}
