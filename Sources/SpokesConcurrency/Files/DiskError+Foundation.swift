import FoundationEssentials
import Glibc

extension DiskError {
    /// Why a file operation of `FoundationEssentials` failed (`Data(contentsOf:)`,
    /// `write(to:)`, `FileManager`), in `strerror`'s words ("No such file or directory")
    /// when it says which `errno` it met, else as the error describes itself: the
    /// reason Foundation's `localizedDescription` gave, without linking Foundation.
    public static func reason(of error: any Error) -> String {
        let posix = (error as? POSIXError) ?? ((error as? CocoaError)?.underlying as? POSIXError)
        return posix.map { String(cString: strerror($0.code.rawValue)) } ?? "\(error)"
    }
}
