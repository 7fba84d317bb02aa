#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SpokesConcurrency

/// An exclusive claim on a directory for as long as this value lives: the directory's
/// `LOCK` file, held with `flock`, and naming the holder's process id. Two node processes
/// with one name and data directory would otherwise share Raft groups and vote twice in
/// one term (review, issue 29 §1.7); the second one is refused, naming the first.
///
/// The kernel drops the lock when the process ends, however it ends, so a crash leaves
/// nothing to clean up. The lock is per open file: a second claim in the same process is
/// refused too.
public final class DirectoryLock: Sendable {
    /// Why a directory could not be claimed.
    public struct Failure: Error, Hashable, CustomStringConvertible {
        public var directory: String
        /// The process that holds it, when it said so.
        public var holder: Int32?
        /// What went wrong otherwise (a directory that cannot be made, say).
        public var problem: String?

        public var description: String {
            if let problem { return "cannot claim \(directory): \(problem)" }
            return "\(directory) is in use by another process\(holder.map { " (pid \($0))" } ?? "")"
        }
    }

    public let directory: String
    private let fd: Int32

    /// Claims `directory` (made, with its parents, if missing). Throws ``Failure`` when
    /// another open file holds it.
    public init(directory: String) throws(Failure) {
        do throws(DiskError) {
            try RealDisk().makeDirectory(directory)
        } catch {
            throw Failure(directory: directory, holder: nil, problem: "\(error)")
        }
        let path = directory + "/LOCK"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure(directory: directory, holder: nil, problem: "cannot open \(path): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let held = errno == EWOULDBLOCK
            let problem = String(cString: strerror(errno))
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            close(fd)
            let digits = count > 0 ? buffer[..<count].filter { (0x30...0x39).contains($0) } : []
            let holder = Int32(String(decoding: digits, as: UTF8.self))
            throw Failure(directory: directory, holder: holder, problem: held ? nil : problem)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        self.fd = fd
        self.directory = directory
    }

    deinit {
        close(fd)
    }
}
