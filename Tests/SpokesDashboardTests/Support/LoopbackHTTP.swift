import Foundation
import Glibc
import SpokesConcurrency

/// A minimal HTTP client for tests: one request per connection on 127.0.0.1, blocking
/// socket calls on a thread of their own, every read bounded by a 10 s timeout.
enum LoopbackHTTP {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: String

        func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    enum Failure: Error, CustomStringConvertible {
        case connect(Int32), closedEarly(String)
        var description: String {
            switch self {
            case .connect(let code): "cannot connect: errno \(code)"
            case .closedEarly(let text): "the server closed before a whole answer: \(text.prefix(300))"
            }
        }
    }

    /// Sends `GET path` (with `headers`) and reads the whole answer (`Connection: close`).
    static func get(port: UInt16, _ path: String, headers: [String: String] = [:], method: String = "GET") async throws -> Response {
        try await runBlocking("test.http") {
            let fd = try connect(port)
            defer { close(fd) }
            try send(fd, request(method, path, port: port, headers: headers.merging(["Connection": "close"]) { $1 }))
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = recv(fd, &buffer, buffer.count, 0)
                if count <= 0 { break }
                received += buffer[..<count]
            }
            return try parse(String(decoding: received, as: UTF8.self))
        }
    }

    /// Opens an event stream at `path` and returns its head and the first whole event.
    static func firstEvent(port: UInt16, _ path: String, headers: [String: String] = [:]) async throws -> (Response, String) {
        try await runBlocking("test.sse") {
            let fd = try connect(port)
            defer { close(fd) }
            try send(fd, request("GET", path, port: port, headers: headers))
            var text = ""
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                if let headEnd = text.range(of: "\r\n\r\n"), text[headEnd.upperBound...].contains("\n\n") { break }
                let count = recv(fd, &buffer, buffer.count, 0)
                if count <= 0 { throw Failure.closedEarly(text) }
                text += String(decoding: buffer[..<count], as: UTF8.self)
            }
            let head = try parse(text)
            let event = head.body.components(separatedBy: "\n\n").first { $0.contains("data:") } ?? ""
            return (head, event)
        }
    }

    private static func request(_ method: String, _ path: String, port: UInt16, headers: [String: String]) -> String {
        var lines = ["\(method) \(path) HTTP/1.1", "Host: 127.0.0.1:\(port)"]
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) where name != "Host" { lines.append("\(name): \(value)") }
        if let host = headers["Host"] { lines[1] = "Host: \(host)" }
        return lines.joined(separator: "\r\n") + "\r\n\r\n"
    }

    private static func connect(_ port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw Failure.connect(code)
        }
        return fd
    }

    private static func send(_ fd: Int32, _ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure.connect(errno) }
            offset += sent
        }
    }

    private static func parse(_ text: String) throws -> Response {
        guard let headEnd = text.range(of: "\r\n\r\n") else { throw Failure.closedEarly(text) }
        let lines = text[..<headEnd.lowerBound].components(separatedBy: "\r\n")
        guard let status = lines.first?.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { throw Failure.closedEarly(text) }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(status: status, headers: headers, body: String(text[headEnd.upperBound...]))
    }
}
