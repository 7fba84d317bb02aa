import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file system in memory behind ``Disk``, for the simulator and tests: the same
/// contract as ``RealDisk``, plus what a machine does to files when it loses power.
///
/// Each file has the bytes a reader sees now and the bytes that are durable (what its
/// last ``sync(_:)`` flushed); each folder has the names a reader sees now and the names
/// that are durable (as of its last ``syncDirectory(_:)``). ``crash(keepingOfUnsynced:)``
/// goes back to the durable names and bytes; of an append not yet flushed it may keep a
/// prefix (a torn write), as a disk that wrote some sectors of it would. So code that
/// forgets a flush loses data here, where a test sees it, and not only on a machine
/// that lost power. ``capacity`` makes writes fail with `ENOSPC` (a full disk);
/// ``slow(on:by:seed:)`` makes every write and flush take virtual time (a slow disk).
///
/// Not modelled: reordering between files (a flush of one file makes nothing else
/// durable), and failures other than a full disk.
public final class SimulatedDisk: Disk {
    private struct File {
        var bytes: [UInt8]
        var durable: [UInt8]
    }

    private struct State {
        var nextFile = 0
        var files: [Int: File] = [:]
        /// Path to file, as a reader sees the folders now.
        var names: [String: Int] = [:]
        /// Path to file, as the folders' last flushes left them.
        var durableNames: [String: Int] = [:]
        var directories: Set<String> = ["/", "."]
        var durableDirectories: Set<String> = ["/", "."]
        var capacity: Int?

        var used: Int { files.values.reduce(0) { $0 + max($1.bytes.count, $1.durable.count) } }

        mutating func makeFile(_ bytes: [UInt8], durable: [UInt8]) -> Int {
            nextFile += 1
            files[nextFile] = File(bytes: bytes, durable: durable)
            return nextFile
        }

        /// Forgets files no name refers to, now or after a crash.
        mutating func collect() {
            let live = Set(names.values).union(durableNames.values)
            files = files.filter { live.contains($0.key) }
        }

        func checkFolder(of path: String, _ operation: String) throws(DiskError) {
            guard directories.contains(DiskPath.parent(of: path)) else { throw DiskError(operation, path, code: ENOENT) }
        }

        func checkRoom(for count: Int, _ operation: String, _ path: String) throws(DiskError) {
            if let capacity, used + count > capacity { throw DiskError(operation, path, code: ENOSPC) }
        }
    }

    private let state = Mutex(State())
    /// The lock files of ``withLock(_:exclusive:_:)``: one lock for all, as every node of a
    /// simulation shares this process (a holder never waits for another).
    private let locks = Mutex(())

    /// How long each write and flush takes while the disk is slow (nil: no time at all):
    /// the clock it takes it on, the range of latencies and the draws (splitmix64).
    private struct Slowness {
        var clock: any RuntimeClock
        var latency: ClosedRange<Double>
        var random: UInt64

        mutating func draw() -> Double {
            random &+= 0x9E37_79B9_7F4A_7C15
            var z = random
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            let unit = Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
            return latency.lowerBound + (latency.upperBound - latency.lowerBound) * unit
        }
    }

    private let slowness = Mutex<Slowness?>(nil)

    /// An empty disk of unbounded size.
    public init() {}

    /// From now on every call that writes or flushes (``append(_:to:)``, ``sync(_:)``,
    /// ``truncate(_:to:)``, ``replace(_:with:mode:)``, ``rename(_:to:)``,
    /// ``syncDirectory(_:)``) takes a latency drawn from `seconds` (from `seed`) on
    /// `clock` before it takes effect: it blocks its thread until a task asleep on
    /// `clock` for that long wakes (on a ``VirtualClock``, until the driver moves time
    /// that far). Callers call the disk off the cooperative pool (``runBlocking(_:_:)``,
    /// as ``Disk`` asks), so only their own thread waits. Reads stay instant (a page cache).
    public func slow(on clock: any RuntimeClock, by seconds: ClosedRange<Double>, seed: UInt64 = 1) {
        slowness.withLock { $0 = Slowness(clock: clock, latency: max(0, seconds.lowerBound)...max(0, seconds.upperBound), random: seed) }
    }

    /// Ends ``slow(on:by:seed:)``: calls made from now on take no time (those waiting finish theirs).
    public func stopSlowing() {
        slowness.withLock { $0 = nil }
    }

    /// Waits out a drawn latency when the disk is slow; at once otherwise.
    private func takeTime() {
        let drawn = slowness.withLock { slowness -> (clock: any RuntimeClock, seconds: Double)? in
            guard var current = slowness else { return nil }
            let seconds = current.draw()
            slowness = current
            return (current.clock, seconds)
        }
        guard let drawn, drawn.seconds > 0 else { return }
        // On the simulator's one thread, the caller sleeps it out after the call instead.
        if SimulationExecutor.charge(drawn.seconds, on: drawn.clock) { return }
        let done = DispatchSemaphore(value: 0)
        Task {
            try? await drawn.clock.sleep(for: drawn.seconds)
            done.signal()
        }
        done.wait()
    }

    /// Bytes the files hold now (as ``capacity`` counts them: a file's unflushed bytes
    /// and the durable ones a crash would bring back).
    public var usedBytes: Int { state.withLock { $0.used } }

    /// Bytes the files may hold in all (nil: no limit); a write past it fails with
    /// `ENOSPC` and changes nothing.
    public var capacity: Int? {
        get { state.withLock { $0.capacity } }
        set { state.withLock { $0.capacity = newValue } }
    }

    /// What a loss of power leaves: every folder's durable names, every file's durable
    /// bytes; of a file whose unflushed bytes extend its durable ones,
    /// `keepingOfUnsynced(count)` of those `count` bytes survive too (0: none, the
    /// default; something between: a torn write).
    public func crash(keepingOfUnsynced: (Int) -> Int = { _ in 0 }) {
        state.withLock { state in
            state.names = state.durableNames
            state.directories = state.durableDirectories
            for (id, file) in state.files {
                var bytes = file.durable
                if file.bytes.count > file.durable.count, file.bytes.starts(with: file.durable) {
                    let extra = file.bytes.count - file.durable.count
                    bytes += file.bytes[file.durable.count..<file.durable.count + min(extra, max(0, keepingOfUnsynced(extra)))]
                }
                state.files[id] = File(bytes: bytes, durable: bytes)
            }
            state.collect()
        }
    }

    /// A new disk holding what a loss of power leaves of this one (``crash(keepingOfUnsynced:)``),
    /// this one unchanged: a restarted node gets the new disk, while what its dead
    /// incarnation's tasks still write (they cannot be killed in one process) lands on the old.
    public func afterCrash(keepingOfUnsynced: (Int) -> Int = { _ in 0 }) -> SimulatedDisk {
        let copy = SimulatedDisk()
        copy.state.withLock { $0 = state.withLock { $0 } }
        copy.crash(keepingOfUnsynced: keepingOfUnsynced)
        return copy
    }

    /// Bytes written that a crash would lose now (a test's way to see a missing flush).
    public var unsyncedBytes: Int {
        state.withLock { state in
            let unsynced = state.files.values.reduce(0) { $0 + ($1.bytes == $1.durable ? 0 : max(1, abs($1.bytes.count - $1.durable.count))) }
            let unsyncedNames = state.names.filter { state.durableNames[$0.key] != $0.value }.count
            return unsynced + unsyncedNames
        }
    }

    public func read(_ path: String) throws(DiskError) -> [UInt8]? {
        state.withLock { state in state.names[path].flatMap { state.files[$0]?.bytes } }
    }

    public func read(_ path: String, at offset: Int, count: Int) throws(DiskError) -> [UInt8] {
        guard let bytes = try read(path) else { throw DiskError("open", path, code: ENOENT) }
        let start = min(max(0, offset), bytes.count)
        return Array(bytes[start..<min(bytes.count, start + max(0, count))])
    }

    public func status(of path: String) throws(DiskError) -> DiskFileStatus? {
        state.withLock { state in
            if let id = state.names[path], let file = state.files[id] {
                return DiskFileStatus(identity: UInt64(id), size: file.bytes.count, isRegularFile: true)
            }
            return state.directories.contains(path) ? DiskFileStatus(identity: 0, size: 0, isRegularFile: false) : nil
        }
    }

    public func rename(_ path: String, to newPath: String) throws(DiskError) {
        takeTime()
        try state.withLock { (state: inout State) throws(DiskError) in
            guard let id = state.names[path] else { throw DiskError("rename \(path) to", newPath, code: ENOENT) }
            try state.checkFolder(of: newPath, "rename \(path) to")
            state.names[newPath] = id
            state.names[path] = nil
            state.collect()
        }
    }

    public func withLock<T>(_ path: String, exclusive: Bool, _ body: () throws -> T) throws -> T {
        try locks.withLock { _ in try body() }
    }

    public func append(_ bytes: [UInt8], to path: String) throws(DiskError) {
        takeTime()
        try state.withLock { (state: inout State) throws(DiskError) in
            try state.checkRoom(for: bytes.count, "write", path)
            if let id = state.names[path] {
                state.files[id]?.bytes += bytes
            } else {
                try state.checkFolder(of: path, "open")
                state.names[path] = state.makeFile(bytes, durable: [])
            }
        }
    }

    public func sync(_ path: String) throws(DiskError) {
        takeTime()
        try state.withLock { (state: inout State) throws(DiskError) in
            guard let id = state.names[path], let file = state.files[id] else { throw DiskError("open", path, code: ENOENT) }
            state.files[id]?.durable = file.bytes
        }
    }

    public func truncate(_ path: String, to length: Int) throws(DiskError) {
        takeTime()
        try state.withLock { (state: inout State) throws(DiskError) in
            guard let id = state.names[path], let file = state.files[id] else { throw DiskError("truncate", path, code: ENOENT) }
            state.files[id]?.bytes = Array(file.bytes.prefix(max(0, length)))
        }
    }

    public func replace(_ path: String, with bytes: [UInt8], mode: UInt32) throws(DiskError) {
        takeTime()
        try state.withLock { (state: inout State) throws(DiskError) in
            try state.checkFolder(of: path + ".tmp", "create")
            try state.checkRoom(for: bytes.count, "write", path + ".tmp")
            let id = state.makeFile(bytes, durable: bytes)
            state.names[path] = id
            state.names[path + ".tmp"] = nil
            state.durableNames[path] = id
            state.durableNames[path + ".tmp"] = nil
            state.collect()
        }
    }

    public func remove(_ path: String) throws(DiskError) {
        state.withLock { state in
            state.names[path] = nil
            state.collect()
        }
    }

    public func removeTree(_ path: String) throws(DiskError) {
        state.withLock { state in
            let prefix = path.hasSuffix("/") ? path : path + "/"
            state.names = state.names.filter { $0.key != path && !$0.key.hasPrefix(prefix) }
            state.directories = state.directories.filter { $0 != path && !$0.hasPrefix(prefix) }
            state.collect()
        }
    }

    public func makeDirectory(_ path: String) throws(DiskError) {
        state.withLock { state in
            var made = path.hasPrefix("/") ? "" : "."
            for component in path.split(separator: "/") {
                made += "/" + component
                let folder = made.hasPrefix("./") ? String(made.dropFirst(2)) : made
                state.directories.insert(folder)
                state.durableDirectories.insert(folder)
            }
        }
    }

    public func syncDirectory(_ path: String) throws(DiskError) {
        takeTime()
        try state.withLock { (state: inout State) throws(DiskError) in
            guard state.directories.contains(path) else { throw DiskError("open the folder", path, code: ENOENT) }
            let inside = { (child: String) in DiskPath.parent(of: child) == path }
            state.durableNames = state.durableNames.filter { !inside($0.key) }.merging(state.names.filter { inside($0.key) }) { $1 }
            state.durableDirectories = state.durableDirectories.filter { !inside($0) }.union(state.directories.filter(inside))
            // What was inside a folder whose removal is now durable is gone with it.
            while let orphan = state.durableDirectories.first(where: { $0 != "/" && $0 != "." && !state.durableDirectories.contains(DiskPath.parent(of: $0)) }) {
                state.durableDirectories.remove(orphan)
            }
            state.durableNames = state.durableNames.filter { state.durableDirectories.contains(DiskPath.parent(of: $0.key)) }
            state.collect()
        }
    }

    public func contents(ofDirectory path: String) throws(DiskError) -> [String]? {
        state.withLock { state in
            guard state.directories.contains(path) else { return nil }
            let inside = { (child: String) in DiskPath.parent(of: child) == path }
            let names = state.names.keys.filter(inside) + state.directories.filter { inside($0) && $0 != path }
            return names.map(DiskPath.name(of:)).sorted()
        }
    }
}
