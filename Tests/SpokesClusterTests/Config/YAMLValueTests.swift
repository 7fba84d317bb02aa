import Testing
@testable import SpokesCluster

@Suite struct YAMLValueTests {
    @Test func everyCaseReportsWhereItStarts() {
        let at = YAMLLocation(line: 2, column: 7)
        #expect(YAMLValue.scalar("x", at).location == at)
        #expect(YAMLValue.null(at).location == at)
        #expect(YAMLValue.sequence([], at).location == at)
        #expect(YAMLValue.mapping([], at).location == at)
        #expect(at.description == "2:7")
    }

    @Test func subscriptFindsAMappingsValueByKey() {
        let at = YAMLLocation(line: 1, column: 1)
        let mapping = YAMLValue.mapping([
            .init(key: "a", value: .scalar("1", at), keyLocation: at),
            .init(key: "b", value: .null(at), keyLocation: at),
        ], at)
        #expect(mapping["b"] == .null(at))
        #expect(mapping["c"] == nil)
        #expect(YAMLValue.scalar("a", at)["a"] == nil)
    }
}
