import Foundation

/// Files the tests read, found from this source file's place in the repository.
enum TestData {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The project's copy of the CityBikes Milano snapshot.
    static let milanoPath = repositoryRoot.appendingPathComponent("Data/citybikes/Milano.json").path

    /// The team's shared copy, when the repository sits beside `shared/` (as in CI).
    static let sharedMilanoPath = repositoryRoot
        .deletingLastPathComponent().appendingPathComponent("shared/data/citybikes/Milano.json").path

    /// Writes `text` to a new temporary file and returns its path.
    static func temporaryFile(_ text: String, name: String = "network.json") throws -> String {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("spokes-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }
}
