import Testing
@testable import SpokesDashboard

@Suite struct NodeShareSVGTests {
    @Test func listsNodesByNameWithCountAndPercentage() throws {
        let svg = NodeShareSVG(shares: ["demo-2": 103, "demo-1": 99, "demo-3": 98]).svg(label: "Users per node")
        let first = try #require(svg.range(of: "data-node=\"demo-1\""))
        let second = try #require(svg.range(of: "data-node=\"demo-2\""))
        #expect(first.lowerBound < second.lowerBound)
        #expect(svg.contains("99 (33.0%)"))
        #expect(svg.contains("103 (34.3%)"))
    }

    @Test func usesEachNodesPaletteColour() {
        let svg = NodeShareSVG(shares: ["b": 1, "a": 1]).svg(label: "x")
        #expect(svg.contains("fill=\"\(NodePalette.colors[0])\""))
        #expect(svg.contains("fill=\"\(NodePalette.colors[1])\""))
    }

    @Test func escapesNodeNames() {
        let svg = NodeShareSVG(shares: ["<script>alert(1)</script>": 4]).svg(label: "x")
        #expect(!svg.contains("<script"))
        #expect(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
    }

    @Test func zeroUsersDrawNoBarAndNoNaN() {
        let svg = NodeShareSVG(shares: ["a": 0]).svg(label: "x")
        #expect(svg.contains("0 (0.0%)"))
        #expect(!svg.lowercased().contains("nan"))
    }
}
