import Testing
@testable import SpokesCluster

@Suite struct FrameAuthenticatorTests {
    let key = HMAC(key: Array("session key".utf8))

    @Test func opensWhatTheOtherEndSealedInOrder() {
        var sender = FrameAuthenticator(key: key)
        var receiver = FrameAuthenticator(key: key)
        for text in ["one", "", "three"] {
            let sealed = sender.seal(Array(text.utf8))
            #expect(sealed.count == text.utf8.count + FrameAuthenticator.tagSize)
            #expect(receiver.open(sealed).map(Array.init) == Array(text.utf8))
        }
        #expect(receiver.sequence == 3)
    }

    @Test func rejectsAForgedFrameAndStaysInStep() {
        var sender = FrameAuthenticator(key: key)
        var receiver = FrameAuthenticator(key: key)
        var forged = sender.seal(Array("pay 1".utf8))
        forged[4] = UInt8(ascii: "9")
        #expect(receiver.open(forged) == nil)
        #expect(receiver.sequence == 0)
    }

    @Test func rejectsAReplayedFrame() {
        var sender = FrameAuthenticator(key: key)
        var receiver = FrameAuthenticator(key: key)
        let first = sender.seal(Array("run task 7".utf8))
        #expect(receiver.open(first) != nil)
        #expect(receiver.open(first) == nil, "the same frame again carries sequence 0, not 1")
    }

    @Test func rejectsReorderedFrames() {
        var sender = FrameAuthenticator(key: key)
        var receiver = FrameAuthenticator(key: key)
        let first = sender.seal(Array("a".utf8))
        let second = sender.seal(Array("b".utf8))
        #expect(receiver.open(second) == nil)
        #expect(receiver.open(first) != nil)
        #expect(receiver.open(second) != nil)
    }

    @Test func rejectsAFrameFromAnotherSession() {
        var other = FrameAuthenticator(key: HMAC(key: Array("another session".utf8)))
        var receiver = FrameAuthenticator(key: key)
        #expect(receiver.open(other.seal(Array("hello".utf8))) == nil)
    }

    @Test func rejectsAFrameShorterThanATag() {
        var receiver = FrameAuthenticator(key: key)
        #expect(receiver.open([1, 2, 3]) == nil)
        #expect(receiver.open([]) == nil)
    }
}
