import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCluster

@Suite struct ClusterSecretTests {
    static let text = "s3cret-that-is-long-enough"

    /// A fresh directory with `cluster.yaml` naming `secret.txt`, which holds `secret` with `mode`.
    func configuration(secret: String, mode: Int) throws -> (directory: TemporaryDirectory, config: String) {
        let directory = try TemporaryDirectory()
        try directory.write(secret + "\n", to: "secret.txt")
        chmod(directory.file("secret.txt"), mode_t(mode))
        return (directory, try directory.write("secret_file: secret.txt\n", to: "cluster.yaml"))
    }

    @Test func neverShowsItselfInText() throws {
        let secret = try ClusterSecret(Self.text, source: "test")
        for text in [secret.description, secret.debugDescription, "\(secret)", String(reflecting: secret)] {
            #expect(!text.contains(Self.text))
            #expect(text.contains(secret.fingerprint))
        }
        #expect(secret.fingerprint.count == 8)
    }

    @Test func randomBytesAreAsManyAsAskedAndFresh() {
        for count in [0, 1, 7, 8, 9, 16, 32, 33] { #expect(randomBytes(count).count == count) }
        // Every byte value turns up in 64 KiB (each is missing with odds of about 1e-111).
        #expect(Set(randomBytes(65_536)).count == 256)
        #expect(randomBytes(16) != randomBytes(16))
    }

    @Test func sameTextSameFingerprintOtherTextOtherFingerprint() throws {
        #expect(try ClusterSecret(Self.text, source: "a").fingerprint == ClusterSecret(" \(Self.text)\n", source: "b").fingerprint)
        #expect(try ClusterSecret(Self.text, source: "a").fingerprint != ClusterSecret(Self.text + "!", source: "b").fingerprint)
    }

    @Test func theDashboardTokenIsTheSecretsHMACForTheDashboardAndNothingElse() throws {
        let secret = try ClusterSecret(Self.text, source: "test")
        // Python: hmac.new(b"s3cret-that-is-long-enough", b"spokes/1 dashboard", sha256).hexdigest()[:32]
        #expect(secret.dashboardToken == "f417bfd3fd25d80ddeb4393dc025b9c9")
        #expect(secret.isDashboardToken("f417bfd3fd25d80ddeb4393dc025b9c9"))
        #expect(!secret.isDashboardToken("f417bfd3fd25d80ddeb4393dc025b9c8"))
        #expect(!secret.isDashboardToken("f417bfd3fd25d80ddeb4393dc025b9c"))
        #expect(!secret.isDashboardToken(""))
        #expect(!secret.dashboardToken.contains(secret.fingerprint), "the token is derived for its own purpose")
        #expect(try ClusterSecret(Self.text + "!", source: "b").dashboardToken != secret.dashboardToken)
    }

    @Test func refusesAShortSecretWithoutQuotingIt() {
        do {
            _ = try ClusterSecret("hunter2", source: "SPOKES_SECRET")
            Issue.record("accepted a 7-byte secret")
        } catch {
            #expect(error == .secretTooShort(source: "SPOKES_SECRET", length: 7))
            #expect(!error.description.contains("hunter2"))
            #expect(error.description.contains("at least 16"))
        }
    }

    @Test func loadsFromTheEnvironmentVariable() throws {
        let settings = try ClusterSettings.load(file: nil, environment: ["SPOKES_SECRET": Self.text])
        #expect(settings.secret == (try ClusterSecret(Self.text, source: "x")))
    }

    @Test func loadsSecretFileRelativeToTheConfigurationFile() throws {
        let (directory, config) = try configuration(secret: Self.text, mode: 0o600)
        defer { directory.remove() }
        let settings = try ClusterSettings.load(file: config, environment: [:])
        #expect(settings.secretFile == "secret.txt")
        #expect(settings.secret == (try ClusterSecret(Self.text, source: "x")))
    }

    @Test func theVariableWinsOverTheFile() throws {
        let (directory, config) = try configuration(secret: Self.text, mode: 0o600)
        defer { directory.remove() }
        let other = "another-secret-long-enough"
        let settings = try ClusterSettings.load(file: config, environment: ["SPOKES_SECRET": other])
        #expect(settings.secret == (try ClusterSecret(other, source: "x")))
    }

    @Test func refusesASecretFileOthersCanRead() throws {
        let (directory, config) = try configuration(secret: Self.text, mode: 0o644)
        defer { directory.remove() }
        do {
            _ = try ClusterSettings.load(file: config, environment: [:])
            Issue.record("accepted a world-readable secret file")
        } catch {
            #expect(error == .security(.secretFileTooOpen(path: directory.file("secret.txt"), mode: "644")))
            #expect(error.description.contains("chmod 600"))
            #expect(!error.description.contains(Self.text))
        }
    }

    @Test func aMissingSecretFileIsNamed() {
        var settings = ClusterSettings()
        settings.secretFile = "/nonexistent/spokes-secret"
        #expect(throws: ConfigurationError.security(.unreadableSecretFile(path: "/nonexistent/spokes-secret", reason: "No such file or directory"))) {
            try settings.loadSecret(environment: [:])
        }
    }

    @Test func withoutASecretANodeMayNotListenBeyondLoopback() throws {
        // Checked before binding: the test never listens beyond loopback.
        var settings = ClusterSettings()
        settings.host = "198.51.100.7"
        #expect(throws: SecurityError.insecureAddress(host: "198.51.100.7")) { try ClusterSystem(settings: settings) }
        #expect(throws: SecurityError.insecureAddress(host: "198.51.100.7")) { try ClusterSystem.checkListenAddress(settings) }
        settings.allowInsecure = true
        try ClusterSystem.checkListenAddress(settings)
        settings.allowInsecure = false
        settings.secret = try ClusterSecret(Self.text, source: "test")
        try ClusterSystem.checkListenAddress(settings)
        settings = ClusterSettings()
        settings.host = "127.0.0.5"
        try ClusterSystem.checkListenAddress(settings)
    }
}
