import Synchronization
import Testing
@testable import SpokesHTTP
@testable import SpokesTransport

@Suite struct HTTPEventStreamTests {
    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func formatsAnEventWithOneDataLinePerLine() {
        #expect(text(HTTPEventStream.encodeEvent(event: "node", data: "a\nb\r\nc\rd", id: nil))
            == "event: node\ndata: a\ndata: b\ndata: c\ndata: d\n\n")
        #expect(text(HTTPEventStream.encodeEvent(event: nil, data: "", id: nil)) == "data: \n\n", "an empty event still dispatches")
        #expect(text(HTTPEventStream.encodeEvent(event: nil, data: "x\n", id: "7")) == "id: 7\ndata: x\ndata: \n\n",
                "a trailing line break survives the round trip")
    }

    @Test func keepsEventNamesAndIDsOnOneLine() {
        #expect(text(HTTPEventStream.encodeEvent(event: "a\r\nb", data: "x", id: "1\n2\u{0}")) == "event: a  b\nid: 1 2\ndata: x\n\n")
    }

    @Test func formatsCommentsLineByLine() {
        #expect(text(HTTPEventStream.encodeComment("one\ntwo")) == ": one\n: two\n\n")
    }

    @Test func queuesEventsInOrderUntilFinished() {
        let stream = HTTPEventStream()
        #expect(stream.send(event: "a", data: "1"))
        #expect(stream.sendComment("hi"))
        stream.finish()
        #expect(!stream.send(data: "late"), "nothing is accepted after finish")
        let (chunks, ending) = stream.takeChunks()
        #expect(chunks.map(text) == ["event: a\ndata: 1\n\n", ": hi\n\n"])
        #expect(ending == .finished)
    }

    @Test func endsAndDropsItsQueueWhenFull() {
        let stream = HTTPEventStream(maxQueuedBytes: 100)
        #expect(stream.send(data: String(repeating: "x", count: 50)))
        #expect(!stream.send(data: String(repeating: "x", count: 50)))
        #expect(!stream.isActive)
        let (chunks, ending) = stream.takeChunks()
        #expect(chunks.isEmpty)
        #expect(ending == .queueFull)
    }

    @Test func runsOnTerminationExactlyOnceWithTheFirstReason() {
        let stream = HTTPEventStream()
        let runs = Atomic<Int>(0)
        stream.onTermination = { runs.add(1, ordering: .relaxed) }
        stream.end(.serverStopped)
        stream.detach(.clientDisconnected)
        stream.detach(.writeFailed)
        #expect(runs.load(ordering: .relaxed) == 1)
        #expect(stream.termination == .serverStopped)
        stream.onTermination = { runs.add(10, ordering: .relaxed) }
        #expect(runs.load(ordering: .relaxed) == 11, "a handler set after the end runs at once")
    }
}
