import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// A node's saved keyring (``KeyringFile``): what `spokes keyring` made of it survives a
/// restart, only its owner may read it, and a file that is not one is named.
@Suite struct KeyringFileTests {
    let old = try! ClusterSecret("the-old-cluster-secret-text", source: "test")
    let new = try! ClusterSecret("the-new-cluster-secret-text", source: "test")

    @Test func aSavedKeyringLoadsAsItWasPrimaryFirst() throws {
        try withTemporaryDirectory { directory in
            let file = KeyringFile(directory: directory)
            #expect(try file.load() == nil)
            var keyring = Keyring(primary: old)
            keyring.install(new)
            try keyring.use(new.fingerprint)
            try file.save(keyring)
            #expect(try file.load() == keyring)
            var info = stat()
            #expect(stat(file.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        }
    }

    @Test func aFileOthersCanReadIsRefusedWithTheCommandThatMendsIt() throws {
        try withTemporaryDirectory { directory in
            let file = KeyringFile(directory: directory)
            try file.save(Keyring(primary: old))
            chmod(file.path, 0o644)
            #expect(throws: KeyringFileError.tooOpen(path: file.path, mode: "644")) { try file.load() }
            #expect("\(KeyringFileError.tooOpen(path: file.path, mode: "644"))".contains("chmod 600 \(file.path)"))
        }
    }

    @Test func aDamagedFileIsNamedAndNeverShowsASecret() throws {
        try withTemporaryDirectory { directory in
            let file = KeyringFile(directory: directory)
            for text in ["{\"primary\": \"short\", \"accepting\": []}", "{\"primary\": \"the-old-cluster-secret-text\"", "not json"] {
                #expect(FileManager.default.createFile(atPath: file.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
                do {
                    _ = try file.load()
                    Issue.record("\(text) loaded")
                } catch {
                    #expect("\(error)".contains(file.path) && "\(error)".contains("delete it"), "\(error)")
                    #expect(!"\(error)".contains("the-old-cluster-secret-text"))
                }
            }
        }
    }

    @Test func theStoreSavesTheKeyringAsItIsAfterEachChangeAndNothingWithoutAFile() async throws {
        try await withTemporaryDirectory { directory in
            let store = KeyringStore(Keyring(primary: old))
            try await store.save()
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
            let file = KeyringFile(directory: directory)
            store.keep(in: file)
            try store.update { $0.install(new) }
            try await store.save()
            #expect(try file.load() == Keyring(primary: old, accepting: [new]))
            try store.update { keyring throws(KeyringError) in try keyring.use(new.fingerprint) }
            try store.update { keyring throws(KeyringError) in try keyring.remove(old.fingerprint) }
            try await store.save()
            #expect(try file.load() == Keyring(primary: new))
        }
    }
}
