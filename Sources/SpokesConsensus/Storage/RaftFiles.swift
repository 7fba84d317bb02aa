#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The blocking POSIX file calls storage needs, each failure named with its file.
/// They block the calling thread: call them from a thread of your own (`runBlocking`),
/// never from the Swift cooperative pool.
enum RaftFiles {
    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The whole file, or nil if it does not exist.
    static func read(_ path: String) throws(RaftStorageError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .io(operation: "open", file: path, errno: errno)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "read", file: path, errno: errno)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// Opens `path` for appending, creating it if needed.
    static func openForAppend(_ path: String) throws(RaftStorageError) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(operation: "open", file: path, errno: errno) }
        return fd
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], file: String) throws(RaftStorageError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { systemWrite(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "write", file: file, errno: errno)
            }
            offset += written
        }
    }

    /// Makes the file's data (and its length) durable.
    static func syncData(_ fd: Int32, file: String) throws(RaftStorageError) {
        #if canImport(Glibc)
        let result = fdatasync(fd)
        #else
        let result = fcntl(fd, F_FULLFSYNC)
        #endif
        guard result == 0 else { throw .io(operation: "fdatasync", file: file, errno: errno) }
    }

    static func truncate(_ fd: Int32, to length: Int, file: String) throws(RaftStorageError) {
        guard ftruncate(fd, off_t(length)) == 0 else { throw .io(operation: "ftruncate", file: file, errno: errno) }
    }

    /// Makes a directory's entries (created, renamed, removed files) durable.
    static func syncDirectory(_ directory: String) throws(RaftStorageError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(operation: "open directory", file: directory, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .io(operation: "fsync directory", file: directory, errno: errno) }
    }

    /// Replaces `name` in `directory` atomically: writes a temporary file, makes it
    /// durable, renames it over `name`, makes the rename durable.
    static func replace(_ name: String, in directory: String, with bytes: [UInt8]) throws(RaftStorageError) {
        let path = join(directory, name)
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(operation: "create", file: temporary, errno: errno) }
        do throws(RaftStorageError) {
            try writeAll(fd, bytes, file: temporary)
            try syncData(fd, file: temporary)
        } catch {
            close(fd)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else { throw .io(operation: "rename to \(name)", file: temporary, errno: errno) }
        try syncDirectory(directory)
    }

    static func closeFile(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }

    static func remove(_ path: String) throws(RaftStorageError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw .io(operation: "unlink", file: path, errno: errno) }
    }

    /// Creates `directory` and its missing parents, each made durable in its parent.
    static func makeDirectory(_ directory: String) throws(RaftStorageError) {
        var path = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            let parent = path.isEmpty ? "/" : path
            path += "/" + component
            if mkdir(path, 0o755) == 0 {
                try syncDirectory(parent)
            } else if errno != EEXIST {
                throw .io(operation: "mkdir", file: path, errno: errno)
            }
        }
    }
}

private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.read(fd, buffer, count)
    #else
    Darwin.read(fd, buffer, count)
    #endif
}

private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(fd, buffer, count)
    #else
    Darwin.write(fd, buffer, count)
    #endif
}
