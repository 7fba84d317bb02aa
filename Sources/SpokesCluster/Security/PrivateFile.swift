import FoundationEssentials
import Glibc

/// The check every file holding secrets passes before it is believed (a `secret_file`, a
/// node's saved keyring): a regular file only its owner may read, as SSH demands of keys.
enum PrivateFile {
    /// Why `path` may not be read as a private file.
    enum Problem: Equatable {
        /// No such file, or no folder that could hold it.
        case absent
        case unreadable(String)
        case notRegular
        /// Others may read it; its mode in octal.
        case tooOpen(mode: String)
    }

    /// What stands in the way of reading `path`, or nil when nothing does.
    static func problem(at path: String) -> Problem? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return errno == ENOENT || errno == ENOTDIR ? .absent : .unreadable(String(cString: strerror(errno)))
        }
        guard info.st_mode & S_IFMT == S_IFREG else { return .notRegular }
        guard info.st_mode & 0o077 == 0 else { return .tooOpen(mode: String(info.st_mode & 0o777, radix: 8)) }
        return nil
    }
}
