/// Why a group's storage could not be read or written. Every case names the file, and
/// for bad data the byte offset of the bad record.
public enum RaftStorageError: Error, Hashable, CustomStringConvertible {
    /// A record before the last one is damaged (a short or bad record at the end is a
    /// torn write and is dropped instead), or a record's contents make no sense.
    case corruptRecord(file: String, offset: Int, reason: String)
    /// The snapshot file is damaged (it is written whole and renamed into place, so it
    /// is never torn).
    case corruptSnapshot(file: String, reason: String)
    /// The log and snapshot do not fit together.
    case inconsistent(file: String, reason: String)
    /// A system call failed.
    case io(operation: String, file: String, errno: Int32)
    /// The storage was closed, or an earlier write failed halfway: a group whose writes
    /// fail stops instead of guessing what reached the disk.
    case unusable(file: String)

    public var description: String {
        switch self {
        case .corruptRecord(let file, let offset, let reason): "\(file): corrupt record at byte \(offset): \(reason)"
        case .corruptSnapshot(let file, let reason): "\(file): corrupt snapshot: \(reason)"
        case .inconsistent(let file, let reason): "\(file): \(reason)"
        case .io(let operation, let file, let code): "\(file): \(operation) failed: \(String(cString: strerror(code)))"
        case .unusable(let file): "\(file): storage is closed or failed earlier"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
