import Foundation
import Testing
@testable import SpokesBikes

@Suite struct BundledNetworksTests {
    @Test func embeddedMilanoIsTheDataFileVerbatim() throws {
        let file = try String(contentsOfFile: TestData.milanoPath, encoding: .utf8)
        // A multi-line literal drops the file's final newline.
        #expect(BundledNetworks.milanoJSON + "\n" == file, "run Scripts/embed-resources after changing Data/citybikes")
    }

    @Test func bundledMilanoDecodes() throws {
        let network = try BundledNetworks.milano
        #expect(network.id == "bikemi")
        #expect(network.stations.count == 318)
    }
}
