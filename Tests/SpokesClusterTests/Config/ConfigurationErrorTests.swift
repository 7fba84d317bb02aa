import Testing
@testable import SpokesCluster

@Suite struct ConfigurationErrorTests {
    private let at = YAMLLocation(line: 3, column: 5)

    @Test func fileErrorsNameTheFile() {
        #expect(ConfigurationError.missingFile("c.yaml").description == "configuration file not found: c.yaml")
        #expect(ConfigurationError.unreadableFile("c.yaml", reason: "it is a directory").description
            == "cannot read configuration file c.yaml: it is a directory")
    }

    @Test func yamlErrorsReadExactlyAsTheParserReportsThem() {
        let error = YAMLError(source: "c.yaml", location: at, reason: .duplicateKey("port", firstLine: 1))
        #expect(ConfigurationError.yaml(error).description == "c.yaml:3:5: duplicate key 'port' (first at line 1)")
    }

    @Test func unknownKeysSuggestOrListTheKnownKeys() {
        #expect(ConfigurationError.unknownKey(source: "c.yaml", location: at, key: "prot", section: "node", suggestion: "port", knownKeys: ["port"]).description
            == "c.yaml:3:5: unknown key 'prot' in 'node'. Did you mean 'port'?")
        #expect(ConfigurationError.unknownKey(source: "c.yaml", location: at, key: "x", section: nil, suggestion: nil, knownKeys: ["a", "b"]).description
            == "c.yaml:3:5: unknown key 'x' at the top level. Known keys: a, b.")
        #expect(ConfigurationError.unknownVariable("SPOKES_SEED", suggestion: "SPOKES_SEEDS").description
            == "unknown environment variable SPOKES_SEED. Did you mean SPOKES_SEEDS?")
    }

    @Test func invalidValuesArePrefixedByWhereTheyWereSet() {
        let problem = "must be an integer from 1 to 10000, got 'many'"
        #expect(ConfigurationError.invalidValue(.file(source: "c.yaml", location: at), setting: "node.slots", problem: problem).description
            == "c.yaml:3:5: node.slots must be an integer from 1 to 10000, got 'many'")
        #expect(ConfigurationError.invalidValue(.environment(variable: "SPOKES_NODE_SLOTS"), setting: "node.slots", problem: problem).description
            == "SPOKES_NODE_SLOTS must be an integer from 1 to 10000, got 'many'")
        #expect(ConfigurationError.invalidValue(.settings, setting: "node.slots", problem: problem).description
            == "node.slots must be an integer from 1 to 10000, got 'many'")
    }
}
