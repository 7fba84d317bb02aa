import Glibc

/// This process's threads, as the kernel lists them: what a test checks to show that
/// something costs no thread of its own.
public enum ProcessThreads {
    /// Every thread's name (`/proc/self/task/*/comm`; Linux keeps 15 bytes of a name).
    public static func names() -> [String] {
        guard let tasks = opendir("/proc/self/task") else { return [] }
        defer { closedir(tasks) }
        var names: [String] = []
        while let entry = readdir(tasks) {
            let id = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard Int(id) != nil else { continue }
            let fd = open("/proc/self/task/\(id)/comm", O_RDONLY)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { continue }
            var name = buffer.prefix(count)
            if name.last == UInt8(ascii: "\n") { name = name.dropLast() }
            names.append(String(decoding: name, as: UTF8.self))
        }
        return names
    }
}
