import FoundationEssentials
import Glibc
import SpokesConcurrency
import Synchronization

/// Turns Ctrl-C (SIGINT), and SIGTERM where asked, into a call of a closure, so a
/// command can cancel its work and still print what it has, or a node can say goodbye.
/// A second signal kills the process as usual.
///
/// The self-pipe pattern: the C signal handler only writes one byte to a pipe (an
/// async-signal-safe `write`); a dedicated thread, never a cooperative-pool thread,
/// blocks reading the pipe and runs the closure. (libdispatch's signal sources rely on
/// signalfd on Linux, which needs the signal blocked in every thread, so they are not
/// usable here.)
final class InterruptHandler: Sendable {
    /// The pipe's write end, read by the signal handler; -1 when none is installed.
    private static let signalPipe = Atomic<Int32>(-1)
    private let readEnd: Int32
    private let writeEnd: Int32

    private let signals: [Int32]

    /// Installs the handler; `action` runs once, on the first of `signals`, until `stop()`.
    init(signals: [Int32] = [SIGINT], onInterrupt action: @escaping @Sendable () -> Void) {
        self.signals = signals
        var ends: [Int32] = [-1, -1]
        let signals = signals
        guard pipe(&ends) == 0 else {
            readEnd = -1
            writeEnd = -1
            return
        }
        readEnd = ends[0]
        writeEnd = ends[1]
        Self.signalPipe.store(writeEnd, ordering: .sequentiallyConsistent)
        let readEnd = readEnd
        PlainThread.start(name: "spokes.interrupt") {
            // Each byte is one SIGINT; end of file means stop() was called.
            var byte: UInt8 = 0
            var fired = false
            while true {
                let count = read(readEnd, &byte, 1)
                if count < 0, errno == EINTR { continue }
                guard count == 1 else { break }
                if !fired {
                    fired = true
                    for number in signals { signal(number, SIG_DFL) }
                    action()
                }
            }
            close(readEnd)
        }
        for number in signals {
            signal(number) { _ in
                var byte: UInt8 = 1
                let descriptor = InterruptHandler.signalPipe.load(ordering: .sequentiallyConsistent)
                if descriptor >= 0 { _ = write(descriptor, &byte, 1) }
            }
        }
    }

    /// Restores the default SIGINT behaviour; closing the pipe ends the waiting thread.
    func stop() {
        guard writeEnd >= 0 else { return }
        for number in signals { signal(number, SIG_DFL) }
        _ = Self.signalPipe.compareExchange(expected: writeEnd, desired: -1, ordering: .sequentiallyConsistent)
        close(writeEnd)
    }
}
