import Foundation
import SpokesCluster
import Testing
@testable import SpokesCLI

/// `spokes version`: one place for the version, the protocol read from the wire's.
@Suite struct VersionCommandTests {
    /// What this build says of its commit (a test build is not stamped, so "unknown").
    let commit = SpokesVersion.commit ?? "unknown"

    @Test func versionPrintsTheReleaseTheProtocolTheCommitAndThePlatform() async {
        let run = await CommandRun.spokes("version")
        #expect(run.status == 0)
        #expect(run.standardError.isEmpty)
        #expect(run.standardOutput == """
            spokes    \(SpokesVersion.release)
            protocol  3 to 7
            commit    \(commit)
            platform  \(SpokesVersion.platform)

            """)
    }

    @Test func jsonCarriesTheSameFacts() async throws {
        let run = await CommandRun.spokes("version", "--json")
        #expect(run.status == 0)
        let json = try run.json()
        #expect(json["version"] as? String == SpokesVersion.release)
        #expect(json["protocolVersions"] as? [Int] == [3, 4, 5, 6, 7])
        #expect(json["commit"] as? String == commit)
        #expect(json["platform"] as? String == SpokesVersion.platform)
        #expect(run.standardOutput.hasSuffix("}\n") && run.standardOutput.filter { $0 == "\n" }.count == 1, "one line")
    }

    @Test func theToolsVersionFlagIsTheSameRelease() async {
        let run = await CommandRun.spokes("--version")
        #expect(run.status == 0 && run.standardOutput == SpokesVersion.release + "\n")
        #expect(SpokesTool.version == SpokesVersion.release)
    }

    @Test func theProtocolVersionsAreTheWiresOwn() {
        #expect(SpokesVersion.protocolVersions == ProtocolVersions.current.lowest...ProtocolVersions.current.highest)
        #expect(SpokesVersion.protocolVersions.contains(WireMessage.protocolVersion))
        #expect(SpokesVersion.protocolDescription == ProtocolVersions.current.description)
    }

    @Test func anUnknownFlagIsAUsageErrorNamingIt() async {
        let run = await CommandRun.spokes("version", "--jsn")
        #expect(run.status == 2)
        #expect(run.standardError.contains("--jsn"))
    }

    @Test func theReleaseIsASemanticVersion() {
        let parts = SpokesVersion.release.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) })
    }
}
