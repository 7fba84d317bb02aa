import Testing
import SpokesNode

@Suite struct NodeDirectoryTests {
    @Test func aPlainNameIsItsOwnFolderUnderNodes() {
        #expect(NodeDirectory.path(of: "pi-1", in: "/data") == "/data/nodes/pi-1")
        #expect(NodeDirectory.folderName(of: "node_7F") == "node_7F")
    }

    @Test func noNameLeavesNodesOrSharesAnothersFolder() {
        #expect(NodeDirectory.folderName(of: "..") == "%2E%2E")
        #expect(NodeDirectory.folderName(of: "a/b") == "a%2Fb")
        #expect(NodeDirectory.folderName(of: "") == "%")
        #expect(NodeDirectory.folderName(of: "a.b") != NodeDirectory.folderName(of: "a_b"))
        #expect(NodeDirectory.folderName(of: "é") == "%C3%A9")
    }
}
