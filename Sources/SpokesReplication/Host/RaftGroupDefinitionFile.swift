import FoundationEssentials
import Glibc
import SpokesConcurrency
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
    static func read(in directory: String, disk: any Disk) throws(Failure) -> RaftGroup? {
        let path = DiskPath.join(directory, name)
        do {
            guard let bytes = try disk.read(path) else { return nil }
            return try JSONDecoder().decode(RaftGroup.self, from: Data(bytes))
        } catch let error as DiskError {
            throw Failure(reason: error.description)
        } catch {
            throw Failure(reason: "cannot read \(path): \(error)")
        }
    }

    static func write(_ group: RaftGroup, in directory: String, disk: any Disk) throws(Failure) {
        let path = DiskPath.join(directory, name)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let bytes = try? encoder.encode(group) else { throw Failure(reason: "cannot encode \(path)") }
        do throws(DiskError) {
            // The group's folder itself must survive a crash (review, issue 29 §1.7): its
            // entry in the data directory is flushed too.
            try disk.makeDirectory(directory)
            try disk.replace(path, with: Array(bytes))
        } catch {
            throw Failure(reason: error.description)
        }
    }
}
