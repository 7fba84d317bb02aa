import Glibc
import SpokesTestKit
import Testing
@testable import SpokesConsensus

/// One process per node's files (review, issue 29 §1.7: two processes with one name and
/// data directory could vote twice).
@Suite struct DirectoryLockTests {
    @Test func aSecondClaimIsRefusedNamingTheHolder() throws {
        let folder = try TemporaryDirectory()
        let directory = folder.path + "/nodes/n1"
        let first = try DirectoryLock(directory: directory)
        #expect(throws: DirectoryLock.Failure(directory: directory, holder: getpid(), problem: nil)) {
            _ = try DirectoryLock(directory: directory)
        }
        withExtendedLifetime(first) {}
    }

    @Test func aReleasedClaimCanBeMadeAgain() throws {
        let folder = try TemporaryDirectory()
        let directory = folder.path + "/n2"
        do { _ = try DirectoryLock(directory: directory) }
        let again = try DirectoryLock(directory: directory)
        #expect(again.directory == directory)
    }

    @Test func aDirectoryThatCannotBeMadeSaysWhy() throws {
        let folder = try TemporaryDirectory()
        let file = folder.path + "/plain"
        #expect(FileManagerless.touch(file))
        #expect(throws: DirectoryLock.Failure.self) { _ = try DirectoryLock(directory: file + "/n3") }
    }
}

/// Makes an empty file without Foundation.
enum FileManagerless {
    static func touch(_ path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }
}
