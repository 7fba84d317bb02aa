import Testing
@testable import SpokesCluster

@Suite struct FrameDecoderTests {
    @Test func framesCarryABigEndianLength() {
        #expect(FrameDecoder.frame([7, 8, 9]) == [0, 0, 0, 3, 7, 8, 9])
        #expect(FrameDecoder.frame([UInt8](repeating: 1, count: 258)).prefix(4) == [0, 0, 1, 2])
    }

    @Test func reassemblesFramesSplitAnywhere() throws {
        let stream = FrameDecoder.frame(Array("hello".utf8)) + FrameDecoder.frame([]) + FrameDecoder.frame(Array("world".utf8))
        for split in 0...stream.count {
            var decoder = FrameDecoder(maximumFrameSize: 100)
            var frames: [[UInt8]] = []
            decoder.feed(stream[..<split])
            while let frame = try decoder.nextFrame() { frames.append(frame) }
            decoder.feed(stream[split...])
            while let frame = try decoder.nextFrame() { frames.append(frame) }
            #expect(frames == [Array("hello".utf8), [], Array("world".utf8)], "split at \(split)")
            #expect(decoder.bufferedByteCount == 0)
        }
    }

    @Test func refusesAnOversizedLengthBeforeBufferingItsPayload() {
        var decoder = FrameDecoder(maximumFrameSize: 1024)
        decoder.feed([0xFF, 0xFF, 0xFF, 0xF0])
        #expect(throws: FrameDecoder.Failure.frameTooLarge(length: 0xFFFF_FFF0, limit: 1024)) { try decoder.nextFrame() }
    }

    @Test func waitsForTheRestOfATruncatedFrame() throws {
        var decoder = FrameDecoder(maximumFrameSize: 100)
        decoder.feed([0, 0, 0, 10, 1, 2, 3])
        #expect(try decoder.nextFrame() == nil)
        #expect(decoder.bufferedByteCount == 7)
    }
}
