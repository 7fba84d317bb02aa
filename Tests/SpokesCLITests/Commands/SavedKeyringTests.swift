import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCLI
import SpokesNode
@testable import SpokesCluster

/// A named node starts from the keyring `spokes keyring` saved in its folder, not from
/// `secret_file`, which after a rotation may name the removed secret.
@Suite struct SavedKeyringTests {
    let old = try! ClusterSecret("the-old-cluster-secret-text", source: "test")
    let new = try! ClusterSecret("the-new-cluster-secret-text", source: "test")

    func settings(name: String, in directory: String, secret: ClusterSecret?) -> ClusterSettings {
        var settings = ClusterSettings()
        settings.nodeName = name
        settings.dataDirectory = directory
        settings.secret = secret
        return settings
    }

    @Test func aNamedNodeStartsFromItsSavedKeyringAndSaysTheConfiguredSecretIsNotInIt() async throws {
        try await withTemporaryDirectory { directory in
            let folder = NodeDirectory.path(of: "rotated", in: directory)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try KeyringFile(directory: folder).save(Keyring(primary: new))
            var settings = settings(name: "rotated", in: directory, secret: old)
            let (file, note) = try await NodeCommand.loadSavedKeyring(into: &settings)
            #expect(file?.path == folder + "/keyring.json")
            #expect(settings.keyring == Keyring(primary: new))
            #expect(note?.contains("the configured secret \(old.fingerprint) is not in it") == true, "\(note ?? "")")
        }
    }

    @Test func withoutASavedKeyringTheConfiguredSecretsHold() async throws {
        try await withTemporaryDirectory { directory in
            var settings = settings(name: "fresh", in: directory, secret: old)
            let (file, note) = try await NodeCommand.loadSavedKeyring(into: &settings)
            #expect(file != nil && note == nil)
            #expect(settings.keyring == Keyring(primary: old))
            var unnamed = self.settings(name: "", in: directory, secret: old)
            let (none, _) = try await NodeCommand.loadSavedKeyring(into: &unnamed)
            #expect(none == nil)
        }
    }

    /// The process lane caught it: a node whose folder cannot be made (its data directory
    /// is under a file) must still start, as it did before keyrings were saved.
    @Test func aDataDirectoryThatCannotHoldAFolderHasNoSavedKeyring() async throws {
        try await withTemporaryDirectory { directory in
            let file = directory + "/a-file"
            #expect(FileManager.default.createFile(atPath: file, contents: Data()))
            var secured = settings(name: "j0", in: file + "/data", secret: old)
            let (_, note) = try await NodeCommand.loadSavedKeyring(into: &secured)
            #expect(note == nil && secured.keyring == Keyring(primary: old))
            var open = settings(name: "j0", in: file + "/data", secret: nil)
            let (_, openNote) = try await NodeCommand.loadSavedKeyring(into: &open)
            #expect(openNote == nil)
        }
    }

    @Test func anOpenNodeIgnoresASavedKeyringAndSaysSo() async throws {
        try await withTemporaryDirectory { directory in
            let folder = NodeDirectory.path(of: "opened", in: directory)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try KeyringFile(directory: folder).save(Keyring(primary: new))
            var settings = settings(name: "opened", in: directory, secret: nil)
            let (_, note) = try await NodeCommand.loadSavedKeyring(into: &settings)
            #expect(settings.keyring == nil)
            #expect(note?.contains("ignores its saved keyring") == true)
        }
    }
}
