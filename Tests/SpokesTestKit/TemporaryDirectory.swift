import Foundation

/// A fresh folder under the system's temporary directory, `spokes-tests-<random>`,
/// removed with everything in it by ``remove()`` or when the last reference goes away.
/// Every test that writes files makes them here, so a run leaves nothing behind, also
/// when a test fails.
public final class TemporaryDirectory: Sendable {
    /// The folder's absolute path.
    public let path: String

    /// Makes the folder.
    public init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("spokes-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the folder (not created).
    public func file(_ name: String) -> String {
        (path as NSString).appendingPathComponent(name)
    }

    /// Writes `text` to `name` inside the folder and returns its path.
    @discardableResult
    public func write(_ text: String, to name: String) throws -> String {
        let file = file(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    /// Removes the folder and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    deinit {
        remove()
    }
}

/// Runs `body` with a fresh temporary folder's path and removes the folder afterwards,
/// whether `body` returns or throws.
public func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try body(directory.path)
}

/// Runs `body` with a fresh temporary folder's path and removes the folder afterwards,
/// whether `body` returns or throws.
public func withTemporaryDirectory<T>(
    isolation: isolated (any Actor)? = #isolation, _ body: (String) async throws -> T
) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try await body(directory.path)
}

/// Runs `body` with the path of a fresh temporary file named `name` holding `text`;
/// its folder is removed afterwards, whether `body` returns or throws.
public func withTemporaryFile<T>(_ text: String, named name: String = "file.txt", _ body: (String) throws -> T) throws -> T {
    try withTemporaryDirectory { folder in
        let path = (folder as NSString).appendingPathComponent(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return try body(path)
    }
}

/// Runs `body` with the path of a fresh temporary file named `name` holding `text`;
/// its folder is removed afterwards, whether `body` returns or throws.
public func withTemporaryFile<T>(
    _ text: String, named name: String = "file.txt", isolation: isolated (any Actor)? = #isolation, _ body: (String) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { folder in
        let path = (folder as NSString).appendingPathComponent(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return try await body(path)
    }
}
