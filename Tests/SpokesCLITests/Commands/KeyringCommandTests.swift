import Foundation
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesCLI
@testable import SpokesCluster

/// `spokes keyring`'s arguments: each mistake is named before any node is asked.
@Suite struct KeyringCommandTests {
    func run(_ arguments: String...) async -> (status: Int32, err: String) {
        let output = Mutex("")
        let context = CommandContext(standardOutput: { _ in }, standardError: { text in output.withLock { $0 += text } }, standardErrorIsTerminal: false)
        let status = await SpokesTool.tool.run(arguments, context: context)
        return output.withLock { (status, $0) }
    }

    @Test(arguments: [
        (["keyring", "frobnicate"], "unknown keyring action 'frobnicate': list, install, use or remove"),
        (["keyring", "use"], "keyring use needs a secret's ID"),
        (["keyring", "remove", "not-hex!"], "keyring remove needs a secret's ID"),
        (["keyring", "install"], "keyring install needs the new secret's FILE"),
        (["keyring", "install", "/nonexistent/new.secret"], "keyring install /nonexistent/new.secret: "),
        (["keyring", "list", "abcd1234"], "keyring list takes no FILE or ID"),
    ])
    func aWrongActionOrKeyIsNamedAndNothingIsAsked(arguments: [String], message: String) async {
        let output = Mutex("")
        let context = CommandContext(standardOutput: { _ in }, standardError: { text in output.withLock { $0 += text } }, standardErrorIsTerminal: false)
        let status = await SpokesTool.tool.run(arguments, context: context)
        #expect(status == 2, "\(arguments): \(output.withLock { $0 })")
        #expect(output.withLock { $0 }.contains(message), "\(output.withLock { $0 })")
    }

    @Test func aSecretFileOthersCanReadIsRefusedAndItsTextNeverShown() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/new.secret"
            let text = "a-new-secret-that-others-can-read"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o644)
            let (status, err) = await run("keyring", "install", path)
            #expect(status == 2 && err.contains(path) && err.contains("644"), "\(err)")
            #expect(!err.contains(text))
        }
    }

    @Test func installCarriesTheFilesSecretAndUseAndRemoveItsFingerprint() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/new.secret"
            try "a-new-cluster-secret-text".write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o600)
            let parse = { (arguments: [String]) throws -> KeyringChange in
                guard case .run(let parsed) = try ArgumentParser.parse(arguments, as: KeyringCommand.spec, toolName: "spokes") else { throw UsageError("help") }
                return try KeyringCommand.change(parsed)
            }
            #expect(try parse(["install", path]) == .install(secret: "a-new-cluster-secret-text"))
            #expect(try parse(["use", "ABCD1234"]) == .use(fingerprint: "abcd1234"))
            #expect(try parse(["remove", "--key", "abcd1234"]) == .remove(fingerprint: "abcd1234"))
            #expect(try parse([]) == .list)
        }
    }

    @Test func aJSONAnswerIsOneLineOfJSONWhateverTheErrorSays() throws {
        let line = try KeyringCommand.Answer(node: "n1", acknowledged: false, error: "refused: \"quoted\"\nand a line").line()
        #expect(line.hasSuffix("\n") && line.dropLast().contains("\n") == false)
        let decoded = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(decoded?["error"] as? String == "refused: \"quoted\"\nand a line" && decoded?["acknowledged"] as? Bool == false)
    }
}
