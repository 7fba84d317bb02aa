#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small files that must survive a crash whole: a group's definition, a node's keyring.
/// ``replace(_:with:mode:)`` writes a temporary file beside the target, flushes it,
/// renames it over the target and flushes the directory, so after a crash the file holds
/// either all of the old bytes or all of the new, never a mix.
///
/// Every function blocks on file I/O: call them through ``runBlocking(_:_:)``, never
/// from the cooperative pool.
public enum DurableFile {
    /// Why a file could not be read or written: the operation, the path and the system's
    /// reason, ready for a log line or an error message.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var operation: String
        public var path: String
        public var reason: String

        public var description: String { "cannot \(operation) \(path): \(reason)" }

        public init(_ operation: String, _ path: String, code: Int32 = errno) {
            self.operation = operation
            self.path = path
            reason = String(cString: strerror(code))
        }
    }

    /// The file's bytes, or nil if there is no such file.
    public static func read(_ path: String) throws(Failure) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw Failure("open", path)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 14)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure("read", path)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// Replaces `path` with `bytes`, atomically and durably, as a file of `mode`
    /// (the temporary file is created with it, so the bytes are never readable by more).
    public static func replace(_ path: String, with bytes: [UInt8], mode: mode_t = 0o644) throws(Failure) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure("create", temporary) }
        var failure: Failure?
        if fchmod(fd, mode) != 0 { failure = Failure("set the mode of", temporary) }
        var offset = 0
        while failure == nil, offset < bytes.count {
            let written = bytes.withUnsafeBytes { systemWrite(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                failure = Failure("write", temporary)
            } else {
                offset += written
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = Failure("flush", temporary) }
        close(fd)
        if let failure {
            unlink(temporary)
            throw failure
        }
        guard rename(temporary, path) == 0 else {
            let failure = Failure("rename \(temporary) to", path)
            unlink(temporary)
            throw failure
        }
        try syncDirectory(of: path)
    }

    /// Flushes the entries of the directory that holds `path` (a file made, renamed or
    /// removed there survives a crash only once its directory is flushed).
    public static func syncDirectory(of path: String) throws(Failure) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure("open the directory", directory) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw Failure("flush the directory", directory) }
    }

    private static func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
        #else
        Darwin.read(fd, buffer, count)
        #endif
    }

    private static func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(fd, buffer, count)
        #else
        Darwin.write(fd, buffer, count)
        #endif
    }
}
