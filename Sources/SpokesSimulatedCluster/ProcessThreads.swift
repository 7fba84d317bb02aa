import Glibc

/// The threads of this process, as Linux reports them in `/proc/self/task`.
enum ProcessThreads {
    /// The id of the calling thread (`/proc/thread-self` names it).
    static func current() -> Int32 {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard count > 0 else { return -1 }
        let path = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.split(separator: "/").last.flatMap { Int32($0) } ?? -1
    }

    /// The ids of the threads that are running or ready to run (state `R`) or waiting on
    /// a disk (`D`): those with work in hand.
    static func busy() -> [Int32] {
        guard let directory = opendir("/proc/self/task") else { return [] }
        defer { closedir(directory) }
        var busy: [Int32] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let thread = Int32(name) else { continue }
            let descriptor = open("/proc/self/task/\(thread)/stat", O_RDONLY)
            guard descriptor >= 0 else { continue }
            let count = read(descriptor, &buffer, buffer.count)
            close(descriptor)
            // "tid (name) S ...": the state follows the name's closing parenthesis.
            guard count > 0, let end = buffer[..<count].lastIndex(of: UInt8(ascii: ")")), end + 2 < count else { continue }
            let state = buffer[end + 2]
            if state == UInt8(ascii: "R") || state == UInt8(ascii: "D") { busy.append(thread) }
        }
        return busy
    }
}
