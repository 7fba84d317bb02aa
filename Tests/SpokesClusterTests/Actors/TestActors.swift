import Distributed
import Synchronization
@testable import SpokesCluster

struct GreeterError: Error, CustomStringConvertible {
    var description: String { "no greeting for strangers" }
}

/// A distributed actor with one of each kind of function the system must carry.
distributed actor Greeter {
    typealias ActorSystem = ClusterSystem

    /// Called when a nap begins, so tests can wait for a call to be in flight.
    let napStarted: @Sendable () -> Void

    init(actorSystem: ClusterSystem, napStarted: @escaping @Sendable () -> Void = {}) {
        self.actorSystem = actorSystem
        self.napStarted = napStarted
    }

    distributed func greet(_ name: String) -> String {
        "hello \(name) from \(id.node.name)"
    }

    distributed func refuse() throws -> String {
        throw GreeterError()
    }

    distributed func echo<Value: Codable & Sendable>(_ value: Value) -> Value {
        value
    }

    /// `text` `times` over: a reply much larger than its call.
    distributed func repeated(_ text: String, times: Int) -> String {
        String(repeating: text, count: max(0, min(times, 1 << 20)))
    }

    distributed func nap(seconds: Double) async throws {
        napStarted()
        // On the system's clock: virtual under a simulated runtime, real otherwise.
        try await actorSystem.runtime.sleep(for: seconds)
    }

    /// Takes an actor reference and calls it.
    distributed func relay(to other: Greeter, name: String) async throws -> String {
        try await other.greet(name)
    }

    /// Returns an actor reference. The greeter owns the counter: a remote reference
    /// does not keep an actor alive.
    distributed func makeCounter() -> Counter {
        let counter = Counter(actorSystem: actorSystem)
        counters.append(counter)
        return counter
    }

    private var counters: [Counter] = []
}

distributed actor Counter {
    typealias ActorSystem = ClusterSystem
    private var count = 0

    distributed func increment() -> Int {
        count += 1
        return count
    }
}

/// Actor systems (not nodes) for a test, all on loopback with free ports, shut down at the end.
final class TestSystems: Sendable {
    let systems: [ClusterSystem]
    /// Systems hold their actors weakly, as a node does; tests keep theirs alive here.
    private let kept = Mutex<[any DistributedActor]>([])

    /// Keeps `actor` alive until the test ends, and returns it.
    @discardableResult
    func keep<Act: DistributedActor>(_ actor: Act) -> Act {
        kept.withLock { $0.append(actor) }
        return actor
    }

    init(_ count: Int, configure: (inout ClusterSettings, Int) -> Void = { _, _ in }) throws {
        systems = try (0..<count).map { index in
            var settings = ClusterSettings()
            settings.nodeName = "node-\(index)"
            settings.callTimeout = 10
            configure(&settings, index)
            return try ClusterSystem(settings: settings)
        }
    }

    func shutdown() {
        for system in systems { system.shutdown() }
    }
}
