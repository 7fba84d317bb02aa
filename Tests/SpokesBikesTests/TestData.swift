import Foundation

/// Files the tests read, found from this source file's place in the repository.
enum TestData {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The project's copy of the CityBikes Milano snapshot.
    static let milanoPath = repositoryRoot.appendingPathComponent("Data/citybikes/Milano.json").path
}
