import Foundation
import SpokesTestKit
import Testing
@testable import SpokesConcurrency

/// ``DurableFile``: whole replacements, the mode asked for, and failures that name the file.
@Suite struct DurableFileTests {
    @Test func aReplacementHoldsTheNewBytesWithTheModeAskedForAndLeavesNoTemporaryFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/keys.json"
            try DurableFile.replace(path, with: Array("first".utf8), mode: 0o600)
            try DurableFile.replace(path, with: Array("second, longer".utf8), mode: 0o600)
            #expect(try DurableFile.read(path) == Array("second, longer".utf8))
            var info = stat()
            #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["keys.json"])
        }
    }

    @Test func aMissingFileReadsAsNil() throws {
        try withTemporaryDirectory { directory throws in
            let bytes = try DurableFile.read(directory + "/absent")
            #expect(bytes == nil)
        }
    }

    @Test func aFileThatCannotBeWrittenIsNamedWithTheReason() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/no-such-folder/file"
            #expect {
                try DurableFile.replace(path, with: [1, 2, 3])
            } throws: { error in
                let text = "\(error)"
                return text.contains(path + ".tmp") && text.contains("No such file or directory")
            }
        }
    }
}
