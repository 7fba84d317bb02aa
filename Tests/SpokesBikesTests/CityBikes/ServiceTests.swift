import Foundation
import SpokesTestKit
import Testing
@testable import SpokesBikes
import SpokesBikesWeb

@Suite struct ServiceTests {
    @Test func missingFileErrorNamesTheFile() {
        #expect(throws: ServiceError.missingFile("Madrid.json")) {
            try Service<City>.file(at: "Madrid.json")
        }
        #expect(ServiceError.missingFile("Madrid.json").description == "file not found: Madrid.json")
    }

    @Test func directoryIsReportedAsUnreadable() {
        let error = #expect(throws: ServiceError.self) { try Service<City>.file(at: NSTemporaryDirectory()) }
        guard case .unreadableFile(_, let reason) = error else {
            Issue.record("expected unreadableFile, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("directory"))
    }

    @Test func invalidJSONSaysWhere() throws {
        try withTemporaryFile("{\"network\": {\n  \"id\": \"x\",\n  \"name\": oops\n}}", named: "network.json") { path in
            let error = #expect(throws: ServiceError.self) { try Service<City>.file(at: path) }
            #expect(error == .invalidJSON(source: path, line: 3, column: 11, reason: "unexpected 'o', expected a value"))
            #expect(error?.description.hasPrefix("\(path):3:11: invalid JSON") == true)
        }
    }

    @Test func wrongTypeSaysWhichField() throws {
        try withTemporaryFile("""
            {"network": {"id": "x", "name": "X", "stations": [
              {"id": "a", "name": "A", "latitude": 1, "longitude": 1, "free_bikes": 1, "empty_slots": 1},
              {"id": "b", "name": "B", "latitude": 1, "longitude": 1, "free_bikes": "many", "empty_slots": 1}]}}
            """, named: "network.json") { path in
            let error = #expect(throws: ServiceError.self) { try Service<City>.file(at: path) }
            #expect(error == .invalidContent(source: path, path: "network.stations[1].free_bikes", reason: "expected a number"))
        }
    }

    @Test func missingKeySaysWhichKey() throws {
        let error = #expect(throws: ServiceError.self) {
            try Service<City>.data(Data(#"{"network": {"id": "x", "name": "X"}}"#.utf8), source: "inline")
        }
        #expect(error == .invalidContent(source: "inline", path: "network", reason: "missing required key 'stations'"))
    }

    @Test func negativeCountIsAnErrorNamingTheStation() throws {
        let json = #"{"network": {"id": "x", "name": "X", "stations": [{"id": "a", "name": "A", "latitude": 1, "longitude": 1, "free_bikes": -2, "empty_slots": 1}]}}"#
        let error = #expect(throws: ServiceError.self) { try Service<City>.data(Data(json.utf8), source: "inline") }
        guard case .invalidContent(_, let path, let reason) = error else {
            Issue.record("expected invalidContent, got \(String(describing: error))")
            return
        }
        #expect(path == "network.stations[0].free_bikes")
        #expect(reason.contains("station 'a'"))
    }

    @Test func loadsFromAFileURL() async throws {
        let city = try await Service<City>.url(URL(fileURLWithPath: TestData.milanoPath)).get()
        #expect(city.network.id == "bikemi")
    }

    @Test(.processLane) func loadsFromAnHTTPURL() async throws {
        let server = try LoopbackHTTPServer(body: Data(contentsOf: URL(fileURLWithPath: TestData.milanoPath)))
        let city = try await Service<City>.url(server.url).get()
        #expect(city.network.id == "bikemi")
        #expect(city.network.stations.count == 318)
    }

    @Test(.processLane) func httpErrorStatusIsReported() async throws {
        let server = try LoopbackHTTPServer(body: Data("gone".utf8), status: "404 Not Found")
        await #expect(throws: ServiceError.requestFailed(url: server.url.absoluteString, reason: "HTTP status 404")) {
            try await Service<City>.url(server.url).get()
        }
    }

    @Test func urlServiceReportsAMissingFileWhenAsked() async {
        let service = Service<City>.url(URL(fileURLWithPath: "/nonexistent/Madrid.json"))
        await #expect(throws: ServiceError.missingFile("/nonexistent/Madrid.json")) { try await service.get() }
    }

    @Test func valueServiceDeliversItsValue() async throws {
        let network = Network.synthetic(stations: 1, bikes: 1, emptySlots: 1)
        let city = try await Service<City>.value(City(network: network)).get()
        #expect(city.network == network)
    }
}
