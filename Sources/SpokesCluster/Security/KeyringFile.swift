import FoundationEssentials
import Glibc
import SpokesConcurrency

/// Where a node keeps its keyring after `spokes keyring` changes it: `keyring.json` in the
/// node's own folder (`DATA/nodes/NAME/`), mode 0600, replaced atomically. A restarted
/// node starts from this file rather than from `secret_file` and `accept_secret_files`,
/// which after a rotation may still name the secret the cluster removed (as Consul keeps
/// its keyring in its data directory). The file holds secrets: it is checked like a
/// secret file (a regular file only its owner may read) before it is believed.
///
/// Every function blocks on file I/O: call them through `runBlocking`.
public struct KeyringFile: Sendable, Hashable {
    public static let name = "keyring.json"

    /// The file's path.
    public let path: String

    /// The keyring file of the node whose own folder is `directory`.
    public init(directory: String) {
        path = DiskPath.join(directory, Self.name)
    }

    private struct Contents: Codable {
        var primary: String
        var accepting: [String]
    }

    /// The saved keyring; nil when none was saved. A file that is not one names itself
    /// and what to do.
    public func load() throws(KeyringFileError) -> Keyring? {
        switch PrivateFile.problem(at: path) {
        case nil: break
        // No file, or no folder for one (the node's folder cannot be made: it starts
        // anyway, and keeps no job of its own): nothing was saved.
        case .absent: return nil
        case .unreadable(let reason): throw .unreadable(path: path, reason: reason)
        case .notRegular: throw .unreadable(path: path, reason: "it is not a regular file")
        case .tooOpen(let mode): throw .tooOpen(path: path, mode: mode)
        }
        let bytes: [UInt8]?
        do {
            bytes = try RealDisk().read(path)
        } catch {
            throw .unreadable(path: path, reason: error.reason)
        }
        guard let bytes else { return nil }
        do {
            let contents = try JSONDecoder().decode(Contents.self, from: Data(bytes))
            return Keyring(primary: try ClusterSecret(contents.primary, source: path),
                           accepting: try contents.accepting.map { text throws(SecurityError) in try ClusterSecret(text, source: path) })
        } catch {
            throw .unreadable(path: path, reason: "it is not a saved keyring (\(error))")
        }
    }

    /// Replaces the file with `keyring`.
    public func save(_ keyring: Keyring) throws(KeyringFileError) {
        let contents = Contents(primary: keyring.primary.revealText(), accepting: keyring.secrets.dropFirst().map { $0.revealText() })
        guard let bytes = try? JSONEncoder().encode(contents) else {
            throw .unwritable(path: path, reason: "the keyring could not be encoded")
        }
        do {
            try RealDisk().replace(path, with: Array(bytes), mode: 0o600)
        } catch {
            throw .unwritable(path: path, reason: error.description)
        }
    }
}

/// Why a node's saved keyring could not be read or written, naming the file.
public enum KeyringFileError: Error, Sendable, Hashable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case tooOpen(path: String, mode: String)
    case unwritable(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason):
            "cannot read this node's saved keyring \(path): \(reason); delete it to start from secret_file and accept_secret_files"
        case .tooOpen(let path, let mode):
            "this node's saved keyring \(path) has mode \(mode), so other users can read its secrets; run: chmod 600 \(path)"
        case .unwritable(let path, let reason):
            "cannot save this node's keyring to \(path): \(reason)"
        }
    }
}
