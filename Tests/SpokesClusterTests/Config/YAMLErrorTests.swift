import Testing
@testable import SpokesCluster

@Suite struct YAMLErrorTests {
    @Test func descriptionIsSourceLineColumnAndReason() {
        let error = YAMLError(source: "cluster.yaml", location: YAMLLocation(line: 7, column: 3), reason: .duplicateKey("port", firstLine: 4))
        #expect(error.description == "cluster.yaml:7:3: duplicate key 'port' (first at line 4)")
    }
}
