import FoundationEssentials
import Glibc
import SpokesCluster
import SpokesConcurrency
import Synchronization

/// `GET /metrics` to a dashboard, over a runtime's network, for its status code alone:
/// how `spokes doctor` checks that a member's dashboard port answers as Prometheus would
/// find it (with the cluster's dashboard token as a bearer token, where there is one).
enum MetricsRequest {
    /// Why no status came back.
    enum Failure: Error, Sendable, Equatable {
        /// Nothing listens there (the connection was refused).
        case refused
        /// No connection, or no status line, within the time.
        case silent
        /// The stream ended or failed before a status line, with the words of the failure.
        case broken(String)
    }

    /// The status code `address` answers `GET /metrics` with, within `timeout` seconds.
    static func status(of address: SocketAddress, token: String?, timeout: Double, runtime: Runtime) async -> Result<Int, Failure> {
        let stream: any ByteStream
        do {
            stream = try await runtime.network.connect(to: address, timeout: timeout)
        } catch TransportError.socketFailed(_, _, let code) where code == ECONNREFUSED {
            return .failure(.refused)
        } catch TransportError.connectTimedOut {
            return .failure(.silent)
        } catch {
            return .failure(.broken("\(error)"))
        }
        let answer = Promise<Result<Int, Failure>, Never>()
        let ended = Promise<Void, Never>()
        let received = Mutex<[UInt8]>([])
        stream.startReading(onBytes: { chunk in
            let line: [UInt8]? = received.withLock { bytes in
                bytes.append(contentsOf: chunk.prefix(4096))
                guard let end = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return bytes.count >= 4096 ? bytes : nil }
                return Array(bytes[..<end])
            }
            guard let line else { return true }
            answer.resolve(Self.statusCode(line).map { .success($0) } ?? .failure(.broken("not an HTTP answer")))
            return false
        }, onEnd: { end in
            answer.resolve(.failure(.broken(end == .closed || end == .stopped ? "the connection closed before an answer" : "\(end)")))
            ended.resolve(())
        })
        var request = "GET /metrics HTTP/1.1\r\nHost: \(address)\r\nConnection: close\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        if stream.writesWait {
            _ = await runBlocking("spokes-doctor-write") { stream.write(bytes) }
        } else {
            _ = stream.write(bytes)
        }
        let result = (try? await withTimeout(seconds: timeout, clock: runtime.clock) { await answer.future.value }) ?? .failure(.silent)
        // Reading ends once the stream is shut down; only then is it freed.
        stream.shutdown()
        await ended.future.value
        stream.close()
        return result
    }

    /// 200 from `HTTP/1.1 200 OK`.
    static func statusCode(_ line: [UInt8]) -> Int? {
        let parts = String(decoding: line, as: UTF8.self).split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), parts[1].count == 3 else { return nil }
        return Int(parts[1])
    }
}
