import Foundation
import Testing
@testable import SpokesBikes

@Suite struct BundledNetworksTests {
    @Test func embeddedMilanoIsTheDataFileVerbatim() throws {
        let file = try String(contentsOfFile: TestData.milanoPath, encoding: .utf8)
        // A multi-line literal drops the file's final newline.
        #expect(BundledNetworks.milanoJSON + "\n" == file, "run Scripts/embed-networks after changing Data/citybikes")
    }

    @Test func dataFileIsTheSharedSnapshot() throws {
        try #require(FileManager.default.fileExists(atPath: TestData.sharedMilanoPath),
                     "no shared/ beside the repository; nothing to compare")
        let ours = try Data(contentsOf: URL(fileURLWithPath: TestData.milanoPath))
        let shared = try Data(contentsOf: URL(fileURLWithPath: TestData.sharedMilanoPath))
        #expect(ours == shared)
    }

    @Test func bundledMilanoDecodes() throws {
        let network = try BundledNetworks.milano
        #expect(network.id == "bikemi")
        #expect(network.stations.count == 318)
    }
}
