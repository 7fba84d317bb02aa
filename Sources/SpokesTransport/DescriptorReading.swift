import Glibc

/// Reads from a file descriptor (a pipe, stdin, a file) as `read(2)` does, going on after
/// a signal interrupts it (`EINTR`). Foundation's `FileHandle.readDataToEndOfFile()` and
/// `availableData` stop the process on `EINTR` instead (a `try!` inside), and signals do
/// arrive here (SIGCHLD from child processes, SIGINT handlers). Blocks: call it off the
/// cooperative pool (`runBlocking`).
public enum DescriptorReading {
    /// The next bytes available (at most `maximum`); empty at the end of the input or on
    /// an error.
    public static func chunk(of descriptor: Int32, maximum: Int = 65_536) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max(1, maximum))
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            return count > 0 ? Array(buffer.prefix(count)) : []
        }
    }

    /// Every byte until the end of the input (or an error).
    public static func all(of descriptor: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        while true {
            let next = chunk(of: descriptor)
            if next.isEmpty { return bytes }
            bytes += next
        }
    }
}
