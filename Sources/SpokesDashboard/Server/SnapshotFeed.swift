import FoundationEssentials
import Glibc
import SpokesCluster
import SpokesConcurrency
import SpokesHTTP

/// The dashboard's snapshots as JSON text, encoded once per gathering however many
/// pages watch, and the event streams that push them.
actor SnapshotFeed {
    let observer: ClusterObserver
    /// Seconds between two snapshots on an event stream.
    let interval: Double
    private var encoded: (time: Double, text: String)?
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    init(observer: ClusterObserver, interval: Double = 0.5) {
        self.observer = observer
        self.interval = interval
    }

    /// The latest snapshot (at most `maxAge` old) as JSON.
    func json(maxAge: Double) async -> String {
        let snapshot = await observer.snapshot(maxAge: maxAge)
        if let encoded, encoded.time == snapshot.time { return encoded.text }
        let text = (try? Self.encoder.encode(snapshot)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        encoded = (snapshot.time, text)
        return text
    }

    /// A stream that sends a `snapshot` event at once and then every `interval` seconds,
    /// until the page goes away (or the server stops).
    nonisolated func stream() -> HTTPEventStream {
        let stream = HTTPEventStream()
        let interval = interval
        let runtime = observer.node.system.runtime
        let producer = Task {
            while !Task.isCancelled {
                let text = await self.json(maxAge: interval * 0.8)
                guard stream.send(event: "snapshot", data: text) else { return }
                try? await runtime.sleep(for: interval)
            }
        }
        stream.onTermination = { producer.cancel() }
        return stream
    }
}
