import Glibc

/// Starts operating-system threads: a detached `pthread` that runs a closure, named for
/// `top -H` and `perf`, and names the calling thread.
///
/// Why not Foundation's `Thread`: it is the only reason a node would link Foundation
/// beyond `FoundationEssentials`, and with it CoreFoundation, whose constructor runs in
/// every process that links it, and ICU (BENCHMARKS.md, "Where an idle node's memory
/// goes"). A thread here is what `Thread` is on Linux underneath: `pthread_create` with
/// the default attributes (so the default stack size), detached.
public enum PlainThread {
    /// Runs `body` on a new detached thread named `name`. A thread that cannot be made
    /// (the process's or the system's limit) stops the process with the reason: as
    /// Foundation's `Thread.start()` does, since no caller could go on without it.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { pointer in
            let start = Unmanaged<Start>.fromOpaque(pointer!).takeRetainedValue()
            PlainThread.nameCurrent(start.name)
            start.body()
            return nil
        }, box)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(box).release()
            fatalError("cannot start the thread \(name): \(String(cString: strerror(result)))")
        }
        pthread_detach(thread)
    }

    /// Names the calling thread (Linux keeps the first 15 bytes, cut before a character
    /// that would not fit). Through `/proc/thread-self/comm`, since Glibc's
    /// `pthread_setname_np` is not visible to Swift; a name that cannot be set is left.
    public static func nameCurrent(_ name: String) {
        var bytes: [UInt8] = []
        for character in name {
            guard bytes.count + character.utf8.count <= 15 else { break }
            bytes += character.utf8
        }
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// The calling thread's name (empty when it cannot be read).
    public static var currentName: String {
        let fd = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return "" }
        return String(decoding: buffer[..<count].prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }

    /// What a new thread runs, handed over through `pthread_create`'s pointer.
    private final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void

        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
