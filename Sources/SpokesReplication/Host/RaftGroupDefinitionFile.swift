import Foundation
import Glibc
import SpokesConsensus

/// `group.json` in a group's directory: the `RaftGroup` it was created with, so a
/// restarted node reopens its groups without being told their replicas, and a group is
/// never reopened with other replicas or another first leader (its log's terms and
/// votes only make sense under the definition they were written with). Written to a
/// temporary file, flushed, renamed and the directory flushed. Every function blocks on
/// file I/O: call them through `runBlocking`.
enum RaftGroupDefinitionFile {
    static let name = "group.json"

    /// Why the file could not be read or written, naming it.
    struct Failure: Error {
        var reason: String
    }

    /// The stored definition, nil if there is none; throws a reason naming the file.
    static func read(in directory: String) throws(Failure) -> RaftGroup? {
        let path = (directory as NSString).appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            return try JSONDecoder().decode(RaftGroup.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw Failure(reason: "cannot read \(path): \(error)")
        }
    }

    static func write(_ group: RaftGroup, in directory: String) throws(Failure) {
        let path = (directory as NSString).appendingPathComponent(name)
        let temporary = path + ".tmp"
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        func failure(_ what: String) -> Failure {
            Failure(reason: "cannot \(what) \(path): \(String(cString: strerror(errno)))")
        }
        if mkdir(directory, 0o755) == 0 {
            // The group's folder itself must survive a crash (review, issue 29 §1.7): its
            // entry in the data directory is flushed too.
            let parent = (directory as NSString).deletingLastPathComponent
            let parentFD = open(parent.isEmpty ? "." : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard parentFD >= 0 else { throw failure("flush the data directory of") }
            defer { close(parentFD) }
            guard fsync(parentFD) == 0 else { throw failure("flush the data directory of") }
        } else if errno != EEXIST {
            throw failure("make the directory of")
        }
        guard let bytes = try? encoder.encode(group) else { throw failure("encode") }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure("create") }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = written == bytes.count && fsync(fd) == 0
        close(fd)
        guard synced, rename(temporary, path) == 0 else { throw failure("write") }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw failure("flush the directory of") }
        defer { close(directoryFD) }
        guard fsync(directoryFD) == 0 else { throw failure("flush the directory of") }
    }
}
