import Testing
@testable import SpokesCluster

/// Where a job's tasks may go: the nodes that run its kind at the job's version.
struct KindPlacementTests {
    let v1 = TaskSchema(name: "pi.sample", version: "1", input: "Pi.Input", output: "Pi.Output")
    let v2 = TaskSchema(name: "pi.sample", version: "2", input: "Pi.Input", output: "Pi.Output")
    let noop = TaskSchema(name: "bench.noop", version: "1", input: "Int", output: "Int")

    @Test func onlyNodesRunningTheSubmittersVersionAreChosen() throws {
        let placement = try KindPlacement(kind: "pi.sample", submitter: v1, offers: [
            .init(node: "a", schemas: [noop, v1]), .init(node: "b", schemas: [noop]), .init(node: "c", schemas: [v2]),
            .init(node: "d", schemas: [v1]),
        ])
        #expect(placement.schema == v1)
        #expect(placement.nodes == ["a", "d"])
    }

    @Test func withoutTheSubmittersVersionTheMostCommonOneWinsAndTiesGoToTheFirstNodeByName() throws {
        let most = try KindPlacement(kind: "pi.sample", submitter: nil, offers: [
            .init(node: "a", schemas: [v1]), .init(node: "b", schemas: [v2]), .init(node: "c", schemas: [v2]),
        ])
        #expect(most.schema == v2 && most.nodes == ["b", "c"])
        let tie = try KindPlacement(kind: "pi.sample", submitter: nil, offers: [
            .init(node: "z", schemas: [v1]), .init(node: "b", schemas: [v2]),
        ])
        #expect(tie.schema == v2 && tie.nodes == ["b"], "b comes before z")
    }

    @Test func aKindNoNodeRunsFailsNamingTheKindTheNodesAskedAndOtherVersions() {
        #expect(throws: NoNodeRunsKind.self) {
            try KindPlacement(kind: "pi.sample", submitter: nil, offers: [.init(node: "a", schemas: [noop])])
        }
        do {
            _ = try KindPlacement(kind: "pi.sample", submitter: v1, offers: [
                .init(node: "b", schemas: [v2]), .init(node: "a", schemas: [noop]), .init(node: "c", schemas: nil),
            ])
            Issue.record("a node with another version only must not be chosen")
        } catch {
            #expect(error.asked == ["a", "b", "c"])
            #expect(error.unreachable == ["c"])
            #expect(error.otherVersions == ["b (\(v2))"])
            let text = error.description
            #expect(text.contains("no alive node runs task kind 'pi.sample' at \(v1) (asked a, b, c)"), "\(text)")
            #expect(text.contains("another version runs on b"), "\(text)")
            #expect(text.contains("could not ask c"), "\(text)")
        }
    }

    @Test func aNodeThatCouldNotBeAskedIsLeftOut() throws {
        let placement = try KindPlacement(kind: "pi.sample", submitter: nil, offers: [
            .init(node: "a", schemas: nil), .init(node: "b", schemas: [v1]),
        ])
        #expect(placement.nodes == ["b"])
    }
}
