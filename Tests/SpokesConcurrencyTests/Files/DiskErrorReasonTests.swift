import FoundationEssentials
import Testing
@testable import SpokesConcurrency

/// The reason a FoundationEssentials file operation failed, in `strerror`'s words.
struct DiskErrorReasonTests {
    @Test func aFileErrorSaysItsErrno() {
        let missing = CocoaError(.fileReadNoSuchFile, userInfo: ["NSUnderlyingError": POSIXError(.ENOENT)])
        #expect(DiskError.reason(of: missing) == "No such file or directory")
        #expect(DiskError.reason(of: POSIXError(.EISDIR)) == "Is a directory")
    }

    @Test func anyOtherErrorDescribesItself() {
        struct Odd: Error, CustomStringConvertible { var description: String { "odd" } }
        #expect(DiskError.reason(of: Odd()) == "odd")
    }
}
