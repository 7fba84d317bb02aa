/// Where a node's shells keep what must survive a restart: Raft logs and snapshots, group
/// definitions, the job journal. One protocol, two implementations: ``RealDisk`` is the
/// machine's file system (POSIX calls), ``SimulatedDisk`` holds files in memory and
/// forgets, at a crash, what was written but not flushed, as TigerBeetle's VOPR and
/// FoundationDB's simulation put their storage under the same code that ships.
///
/// The contract both keep (and `DiskContractTests` checks on both):
/// - ``append(_:to:)`` adds bytes at a file's end, creating the file; neither the bytes
///   nor a new file's name survive a crash until ``sync(_:)`` (the bytes) and
///   ``syncDirectory(_:)`` of its folder (the name).
/// - ``replace(_:with:mode:)`` is atomic and durable: after a crash the file holds all
///   of the old bytes or all of the new, never a mix (temporary file, flush, rename,
///   directory flush).
/// - ``makeDirectory(_:)`` makes a folder and its missing parents durably.
/// - Every failure is a ``DiskError`` naming the operation and the path.
///
/// Every method may block the calling thread on I/O: call them through
/// ``runBlocking(_:_:)``, never from the cooperative pool.
public protocol Disk: Sendable {
    /// The whole file, or nil if there is no such file.
    func read(_ path: String) throws(DiskError) -> [UInt8]?
    /// `count` bytes (fewer at the end of the file) from `offset`.
    func read(_ path: String, at offset: Int, count: Int) throws(DiskError) -> [UInt8]
    /// What is at `path` (its identity, length and whether it is a regular file), or nil
    /// if nothing is.
    func status(of path: String) throws(DiskError) -> DiskFileStatus?
    /// Appends `bytes` to the file, creating it (mode 0644) if missing.
    func append(_ bytes: [UInt8], to path: String) throws(DiskError)
    /// Makes the file's bytes and length durable (`fdatasync`).
    func sync(_ path: String) throws(DiskError)
    /// Cuts the file to `length` bytes (not durable until ``sync(_:)``).
    func truncate(_ path: String, to length: Int) throws(DiskError)
    /// Replaces the file with `bytes`, atomically and durably, as a file of `mode`.
    func replace(_ path: String, with bytes: [UInt8], mode: UInt32) throws(DiskError)
    /// Renames `path` to `newPath`, replacing what is there (durable once the folder is
    /// flushed, ``syncDirectory(_:)``).
    func rename(_ path: String, to newPath: String) throws(DiskError)
    /// Runs `body` holding the lock file `path` (made if missing), shared or exclusive,
    /// against other processes (and, on ``SimulatedDisk``, other nodes of the simulation).
    /// A shared lock that cannot be made (a folder the reader may not write) is skipped.
    func withLock<T>(_ path: String, exclusive: Bool, _ body: () throws -> T) throws -> T
    /// Removes the file; a missing one is not an error.
    func remove(_ path: String) throws(DiskError)
    /// Removes a folder and everything in it; a missing one is not an error.
    func removeTree(_ path: String) throws(DiskError)
    /// Makes `path` and its missing parents, each made durable in its parent.
    func makeDirectory(_ path: String) throws(DiskError)
    /// Makes the entries of folder `path` (files made, renamed or removed) durable.
    func syncDirectory(_ path: String) throws(DiskError)
    /// The names in folder `path`, or nil if there is no such folder.
    func contents(ofDirectory path: String) throws(DiskError) -> [String]?
}

extension Disk {
    /// The file's length in bytes, or nil if there is no such file.
    public func size(of path: String) throws(DiskError) -> Int? { try status(of: path)?.size }

    /// Replaces the file as a file of mode 0644 (see ``replace(_:with:mode:)``).
    public func replace(_ path: String, with bytes: [UInt8]) throws(DiskError) {
        try replace(path, with: bytes, mode: 0o644)
    }
}

/// Paths as ``Disk`` spells them: `/`-separated strings.
public enum DiskPath {
    /// `directory/name`.
    public static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The folder that holds `path` (`.` for a bare name).
    public static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The last component of `path` (`path` itself when it has no `/`).
    public static func name(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}

/// What ``Disk/status(of:)`` says of a path.
public struct DiskFileStatus: Sendable, Hashable {
    /// Which file this is: another value means another file (one renamed over it).
    public var identity: UInt64
    public var size: Int
    /// False for a folder or a device.
    public var isRegularFile: Bool

    public init(identity: UInt64, size: Int, isRegularFile: Bool) {
        self.identity = identity
        self.size = size
        self.isRegularFile = isRegularFile
    }
}

/// Why a file could not be read or written: the operation, the path and the system's
/// error number, ready for a log line or an error message.
public struct DiskError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was being done, e.g. `write`, `flush`, `rename x.tmp to`.
    public var operation: String
    public var path: String
    /// The system's error number (`ENOSPC`, `EIO`, ...).
    public var code: Int32

    public init(_ operation: String, _ path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// The system's words for ``code``.
    public var reason: String { String(cString: strerror(code)) }

    public var description: String { "cannot \(operation) \(path): \(reason)" }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
