import Testing
@testable import SpokesDashboard

@Suite struct NodePaletteTests {
    @Test func nodesTakeColoursInTheOrderOfTheirNames() {
        let colors = NodePalette.colors(for: ["demo-3", "demo-1", "demo-2", "demo-1"])
        #expect(colors == ["demo-1": NodePalette.colors[0], "demo-2": NodePalette.colors[1], "demo-3": NodePalette.colors[2]])
    }

    @Test func coloursCycleWhenNodesOutnumberThem() {
        let names = (0..<(NodePalette.colors.count + 1)).map { "node-\(String($0 + 10))" }
        let colors = NodePalette.colors(for: names)
        #expect(colors[names.last ?? ""] == NodePalette.colors[0])
    }

    @Test func everyNodeColourIsDistinct() {
        #expect(Set(NodePalette.colors).count == NodePalette.colors.count)
    }

    @Test func givesTheScriptTheSameColours() {
        #expect(NodePalette.javascriptArray.hasPrefix("['#4e79a7', '#f28e2b'"))
        #expect(NodePalette.javascriptArray.components(separatedBy: ",").count == NodePalette.colors.count)
    }
}
