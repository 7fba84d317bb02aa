import Foundation
import SpokesTestKit
import Testing
@testable import SpokesConcurrency

/// The ``Disk`` contract, played on both implementations: the machine's (``RealDisk``,
/// in a temporary folder) and the simulator's (``SimulatedDisk``), so the simulator's
/// files behave as a node's do.
@Suite struct DiskContractTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case real, simulated
        var testDescription: String { rawValue }
    }

    /// Runs `body` with a disk of `kind` and a folder on it that exists.
    private func withDisk(_ kind: Kind, _ body: (any Disk, String) throws -> Void) throws {
        switch kind {
        case .real:
            try withTemporaryDirectory { folder in try body(RealDisk(), folder) }
        case .simulated:
            let disk = SimulatedDisk()
            try disk.makeDirectory("/data")
            try body(disk, "/data")
        }
    }

    @Test(arguments: Kind.allCases)
    func appendsReadBackWholeAndByRange(_ kind: Kind) throws {
        try withDisk(kind) { disk, folder in
            let path = DiskPath.join(folder, "log")
            #expect(try disk.read(path) == nil)
            #expect(try disk.size(of: path) == nil)
            try disk.append(Array("hello ".utf8), to: path)
            try disk.append(Array("world".utf8), to: path)
            #expect(try disk.read(path) == Array("hello world".utf8))
            #expect(try disk.size(of: path) == 11)
            #expect(try disk.read(path, at: 6, count: 100) == Array("world".utf8))
            try disk.truncate(path, to: 5)
            #expect(try disk.read(path) == Array("hello".utf8))
        }
    }

    @Test(arguments: Kind.allCases)
    func aReplacementHoldsTheNewBytesAndLeavesNoTemporaryFile(_ kind: Kind) throws {
        try withDisk(kind) { disk, folder in
            let path = DiskPath.join(folder, "keys.json")
            try disk.replace(path, with: Array("first".utf8), mode: 0o600)
            try disk.replace(path, with: Array("second, longer".utf8), mode: 0o600)
            #expect(try disk.read(path) == Array("second, longer".utf8))
            #expect(try disk.contents(ofDirectory: folder) == ["keys.json"])
        }
    }

    @Test func aRealReplacementHasTheModeAskedFor() throws {
        try withTemporaryDirectory { folder in
            let path = folder + "/keys.json"
            try RealDisk().replace(path, with: [1], mode: 0o600)
            var info = stat()
            #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        }
    }

    @Test(arguments: Kind.allCases)
    func foldersAreMadeListedAndRemovedWhole(_ kind: Kind) throws {
        try withDisk(kind) { disk, folder in
            let group = DiskPath.join(folder, "raft/taskjob-1")
            try disk.makeDirectory(group)
            try disk.append([1], to: DiskPath.join(group, "log"))
            try disk.replace(DiskPath.join(group, "group.json"), with: [2])
            #expect(try disk.contents(ofDirectory: DiskPath.join(folder, "raft")) == ["taskjob-1"])
            #expect(try disk.contents(ofDirectory: group) == ["group.json", "log"])
            try disk.removeTree(group)
            #expect(try disk.contents(ofDirectory: group) == nil)
            #expect(try disk.contents(ofDirectory: DiskPath.join(folder, "raft")) == [])
            try disk.remove(DiskPath.join(folder, "absent"))
        }
    }

    @Test(arguments: Kind.allCases)
    func aFileInAMissingFolderFailsNamingItsPathAndReason(_ kind: Kind) throws {
        try withDisk(kind) { disk, folder in
            let path = DiskPath.join(folder, "no-such-folder/file")
            #expect {
                try disk.replace(path, with: [1, 2, 3])
            } throws: { error in
                "\(error)".contains(path + ".tmp") && "\(error)".contains("No such file or directory")
            }
            #expect(throws: DiskError.self) { try disk.append([1], to: path) }
        }
    }
}

/// What ``SimulatedDisk`` does that a machine does when it loses power.
@Suite struct SimulatedDiskTests {
    @Test func aCrashKeepsFlushedBytesAndLosesTheRest() throws {
        let disk = SimulatedDisk()
        try disk.makeDirectory("/d")
        try disk.append(Array("kept".utf8), to: "/d/log")
        try disk.sync("/d/log")
        try disk.syncDirectory("/d")
        try disk.append(Array(" lost".utf8), to: "/d/log")
        #expect(disk.unsyncedBytes > 0)
        disk.crash()
        #expect(try disk.read("/d/log") == Array("kept".utf8))
        #expect(disk.unsyncedBytes == 0)
    }

    @Test func aCrashMayTearAnUnflushedAppend() throws {
        let disk = SimulatedDisk()
        try disk.makeDirectory("/d")
        try disk.append(Array("kept".utf8), to: "/d/log")
        try disk.sync("/d/log")
        try disk.syncDirectory("/d")
        try disk.append(Array("+torn".utf8), to: "/d/log")
        disk.crash(keepingOfUnsynced: { count in count / 2 })
        #expect(try disk.read("/d/log") == Array("kept+t".utf8))
    }

    @Test func aNewFileWhoseFolderWasNotFlushedIsGoneAfterACrash() throws {
        let disk = SimulatedDisk()
        try disk.makeDirectory("/d")
        try disk.append([1], to: "/d/new")
        try disk.sync("/d/new")
        disk.crash()
        #expect(try disk.read("/d/new") == nil)
    }

    @Test func aReplacementIsWholeAfterACrash() throws {
        let disk = SimulatedDisk()
        try disk.makeDirectory("/d")
        try disk.replace("/d/f", with: [1, 2])
        try disk.replace("/d/f", with: [3])
        disk.crash()
        #expect(try disk.read("/d/f") == [3])
    }

    @Test func aRemovedFolderWhoseParentWasNotFlushedComesBackAfterACrash() throws {
        let disk = SimulatedDisk()
        try disk.makeDirectory("/d/g")
        try disk.replace("/d/g/group.json", with: [1])
        try disk.removeTree("/d/g")
        disk.crash()
        #expect(try disk.read("/d/g/group.json") == [1])
        try disk.removeTree("/d/g")
        try disk.syncDirectory("/d")
        disk.crash()
        #expect(try disk.contents(ofDirectory: "/d") == [])
    }

    @Test func aFullDiskRefusesWritesWithENOSPCAndChangesNothing() throws {
        let disk = SimulatedDisk()
        try disk.makeDirectory("/d")
        disk.capacity = 8
        try disk.append(Array("12345".utf8), to: "/d/log")
        #expect { try disk.append(Array("6789".utf8), to: "/d/log") } throws: { ($0 as? DiskError)?.code == ENOSPC }
        #expect(try disk.read("/d/log") == Array("12345".utf8))
    }

    @Test func aFullDiskLeftWithABudgetTakesThatMuchMoreAndNoMore() throws {
        let disk = SimulatedDisk()
        try disk.makeDirectory("/d")
        try disk.append(Array("abc".utf8), to: "/d/log")
        try disk.sync("/d/log")
        #expect(disk.usedBytes == 3)
        // What the simulator's full-disk fault does: room for `budget` more bytes.
        disk.capacity = disk.usedBytes + 4
        try disk.append(Array("defg".utf8), to: "/d/log")
        #expect { try disk.append(Array("h".utf8), to: "/d/log") } throws: { ($0 as? DiskError)?.code == ENOSPC }
        #expect { try disk.replace("/d/other", with: [1]) } throws: { ($0 as? DiskError)?.code == ENOSPC }
        disk.capacity = nil
        try disk.append(Array("h".utf8), to: "/d/log")
        #expect(try disk.read("/d/log") == Array("abcdefgh".utf8))
    }

    @Test func aSlowDisksWritesTakeEffectOnlyOnceTheVirtualClockMovedByTheirLatency() async throws {
        let disk = SimulatedDisk()
        let clock = VirtualClock()
        try disk.makeDirectory("/d")
        disk.slow(on: clock, by: 0.5...0.5)
        // Off the cooperative pool, as every caller of a disk calls it.
        let writing = Task { try await runBlocking("test.slow-disk") { try disk.append([1, 2], to: "/d/log") } }
        for _ in 0..<1_000_000 where clock.sleepers == 0 { await Task.yield() }
        #expect(clock.sleepers == 1, "the write waits on the clock")
        #expect(try disk.read("/d/log") == nil, "and has not happened yet")
        clock.advance(by: 0.4)
        for _ in 0..<1000 { await Task.yield() }
        #expect(try disk.read("/d/log") == nil, "not before its latency")
        clock.advance(by: 0.1)
        try await writing.value
        #expect(try disk.read("/d/log") == [1, 2])
        #expect(try disk.read("/d/log", at: 0, count: 1) == [1], "reads take no time")
        disk.stopSlowing()
        try disk.append([3], to: "/d/log")
        #expect(try disk.read("/d/log") == [1, 2, 3], "a disk no longer slow writes at once")
    }
}
