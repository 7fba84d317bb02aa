#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The machine's file system behind ``Disk``: POSIX calls, each failure a ``DiskError``
/// naming its file. Every method blocks the calling thread.
public struct RealDisk: Disk {
    public init() {}

    public func read(_ path: String) throws(DiskError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw DiskError("open", path, code: errno)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw DiskError("read", path, code: errno)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    public func read(_ path: String, at offset: Int, count: Int) throws(DiskError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DiskError("open", path, code: errno) }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: max(0, count))
        var done = 0
        while done < bytes.count {
            let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(offset + done)) }
            if read < 0 {
                if errno == EINTR { continue }
                throw DiskError("read", path, code: errno)
            }
            if read == 0 { break }
            done += read
        }
        return Array(bytes[0..<done])
    }

    public func status(of path: String) throws(DiskError) -> DiskFileStatus? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT { return nil }
            throw DiskError("read", path, code: errno)
        }
        return DiskFileStatus(
            identity: UInt64(status.st_ino) ^ (UInt64(status.st_dev) << 40), size: Int(status.st_size),
            isRegularFile: status.st_mode & S_IFMT == S_IFREG)
    }

    public func rename(_ path: String, to newPath: String) throws(DiskError) {
        guard systemRename(path, newPath) == 0 else { throw DiskError("rename \(path) to", newPath, code: errno) }
    }

    public func withLock<T>(_ path: String, exclusive: Bool, _ body: () throws -> T) throws -> T {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            if !exclusive { return try body() }
            throw DiskError("open", path, code: errno)
        }
        defer { close(descriptor) }
        while flock(descriptor, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            guard errno == EINTR else { throw DiskError("lock", path, code: errno) }
        }
        return try body()
    }

    public func append(_ bytes: [UInt8], to path: String) throws(DiskError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DiskError("open", path, code: errno) }
        defer { close(fd) }
        try writeAll(fd, bytes, path: path)
    }

    public func sync(_ path: String) throws(DiskError) {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DiskError("open", path, code: errno) }
        defer { close(fd) }
        #if canImport(Glibc)
        let result = fdatasync(fd)
        #else
        let result = fcntl(fd, F_FULLFSYNC)
        #endif
        guard result == 0 else { throw DiskError("flush", path, code: errno) }
    }

    public func truncate(_ path: String, to length: Int) throws(DiskError) {
        #if canImport(Glibc)
        let result = Glibc.truncate(path, off_t(length))
        #else
        let result = Darwin.truncate(path, off_t(length))
        #endif
        guard result == 0 else { throw DiskError("truncate", path, code: errno) }
    }

    public func replace(_ path: String, with bytes: [UInt8], mode: UInt32) throws(DiskError) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode_t(mode))
        guard fd >= 0 else { throw DiskError("create", temporary, code: errno) }
        var failure: DiskError?
        // The temporary file is created with `mode`, and set to it in case it existed, so
        // the bytes are never readable by more.
        if fchmod(fd, mode_t(mode)) != 0 { failure = DiskError("set the mode of", temporary, code: errno) }
        if failure == nil {
            do throws(DiskError) { try writeAll(fd, bytes, path: temporary) } catch { failure = error }
        }
        if failure == nil, fsync(fd) != 0 { failure = DiskError("flush", temporary, code: errno) }
        close(fd)
        if let failure {
            unlink(temporary)
            throw failure
        }
        guard systemRename(temporary, path) == 0 else {
            let failure = DiskError("rename \(temporary) to", path, code: errno)
            unlink(temporary)
            throw failure
        }
        try syncDirectory(DiskPath.parent(of: path))
    }

    public func remove(_ path: String) throws(DiskError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw DiskError("remove", path, code: errno) }
    }

    public func removeTree(_ path: String) throws(DiskError) {
        guard let names = try contents(ofDirectory: path) else { return try remove(path) }
        for name in names {
            let child = DiskPath.join(path, name)
            var status = stat()
            if lstat(child, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
                try removeTree(child)
            } else {
                try remove(child)
            }
        }
        guard rmdir(path) == 0 || errno == ENOENT else { throw DiskError("remove the folder", path, code: errno) }
    }

    public func makeDirectory(_ path: String) throws(DiskError) {
        var made = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            let parent = made.isEmpty ? "/" : made
            made += "/" + component
            if mkdir(made, 0o755) == 0 {
                try syncDirectory(parent)
            } else if errno != EEXIST {
                throw DiskError("create the folder", made, code: errno)
            }
        }
    }

    public func syncDirectory(_ path: String) throws(DiskError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw DiskError("open the folder", path, code: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw DiskError("flush the folder", path, code: errno) }
    }

    public func contents(ofDirectory path: String) throws(DiskError) -> [String]? {
        guard let directory = opendir(path) else {
            if errno == ENOENT { return nil }
            throw DiskError("list the folder", path, code: errno)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(DiskError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { systemWrite(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw DiskError("write", path, code: errno)
            }
            // A write that makes no progress is a full device.
            guard written > 0 else { throw DiskError("write", path, code: ENOSPC) }
            offset += written
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

private func systemRename(_ path: String, _ newPath: String) -> Int32 {
    #if canImport(Glibc)
    Glibc.rename(path, newPath)
    #else
    Darwin.rename(path, newPath)
    #endif
}
