import Foundation
import Synchronization

/// Runs code on real OS threads, the way the locks under test are meant to be used.
enum Threads {
    /// Starts `count` threads running `body(index)` and waits for all of them, at most
    /// `timeout` seconds. Returns false if they did not all finish in time.
    static func run(_ count: Int, timeout: Double = 30, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread {
                body(index)
                group.leave()
            }.start()
        }
        return group.wait(timeout: .now() + timeout) == .success
    }
}

/// A counter deliberately left unsynchronised, so that only the lock under test keeps
/// it exact. Sendable so threads can share it: every test mutates it only inside the
/// lock it is testing, which is the property being proven.
final class UnsafeCounter: @unchecked Sendable {
    var value = 0
}

/// Thread-safe list of events, to observe what callbacks did.
final class Log<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var values: [Element] { items.withLock { $0 } }
}
