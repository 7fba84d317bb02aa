import SpokesTestKit
import Testing
@testable import SpokesCrypto

/// A connection's two `FrameSeal`s: frames open only on the other side, once, in order,
/// whole and unaltered, and under keys that belong to that connection and direction.
@Suite struct FrameSealTests {
    static let secret = Array("a cluster secret long enough".utf8)
    static let dialerNonce = [UInt8](repeating: 0xd1, count: 32)
    static let acceptorNonce = [UInt8](repeating: 0xac, count: 32)

    /// The dialer's and the acceptor's seals of one connection.
    static func connection(dialerNonce: [UInt8] = dialerNonce, acceptorNonce: [UInt8] = acceptorNonce) -> (dialer: FrameSeal, acceptor: FrameSeal) {
        (FrameSeal(secret: secret, dialerNonce: dialerNonce, acceptorNonce: acceptorNonce, role: .dialer),
         FrameSeal(secret: secret, dialerNonce: dialerNonce, acceptorNonce: acceptorNonce, role: .acceptor))
    }

    @Test func framesRoundTripInBothDirectionsAndHideThePayload() throws {
        var (dialer, acceptor) = Self.connection()
        for index in 0..<20 {
            let payload = Array("task input with a marker \(index)".utf8)
            let frame = try dialer.seal(payload)
            #expect(frame.count == payload.count + FrameSeal.overhead)
            #expect(!frame.contains(subsequence: Array("marker".utf8)))
            #expect(acceptor.open(frame) == payload)
            let reply = try acceptor.seal(Array("reply \(index)".utf8))
            #expect(dialer.open(reply) == Array("reply \(index)".utf8))
        }
        #expect(try acceptor.open(dialer.seal([])) == [])
        #expect(dialer.sentFrames == 21 && acceptor.receivedFrames == 21)
    }

    @Test func aWritersCopyAndAReadersCopyOfOneSealWorkApart() throws {
        let (dialer, acceptor) = Self.connection()
        var (dialerWriter, dialerReader) = (dialer, dialer)
        var (acceptorWriter, acceptorReader) = (acceptor, acceptor)
        for index in 0..<5 {
            #expect(try acceptorReader.open(dialerWriter.seal([UInt8(index)])) == [UInt8(index)])
            #expect(try dialerReader.open(acceptorWriter.seal([UInt8(index), 1])) == [UInt8(index), 1])
        }
        #expect(dialerWriter.sentFrames == 5 && dialerWriter.receivedFrames == 0)
        #expect(dialerReader.sentFrames == 0 && dialerReader.receivedFrames == 5)
    }

    @Test func theSamePayloadTwiceMakesTwoDifferentFrames() throws {
        var (dialer, _) = Self.connection()
        let payload = Array("same".utf8)
        #expect(try dialer.seal(payload) != dialer.seal(payload))
    }

    @Test func aReplayedFrameIsRefused() throws {
        var (dialer, acceptor) = Self.connection()
        let frame = try dialer.seal(Array("transfer once".utf8))
        #expect(acceptor.open(frame) != nil)
        #expect(acceptor.open(frame) == nil)
    }

    @Test func reorderedOrSkippedFramesAreRefused() throws {
        var (dialer, acceptor) = Self.connection()
        let first = try dialer.seal(Array("first".utf8))
        let second = try dialer.seal(Array("second".utf8))
        let third = try dialer.seal(Array("third".utf8))
        #expect(acceptor.open(second) == nil)
        #expect(acceptor.open(third) == nil)
        // A refused frame changes nothing: the right one still opens, then the others in order.
        #expect(acceptor.open(first) == Array("first".utf8))
        #expect(acceptor.open(third) == nil)
        #expect(acceptor.open(second) == Array("second".utf8))
        #expect(acceptor.open(third) == Array("third".utf8))
    }

    @Test func truncatedOrExtendedFramesAreRefused() throws {
        var (dialer, acceptor) = Self.connection()
        let frame = try dialer.seal(Array("a payload of some length".utf8))
        for count in 0..<frame.count {
            #expect(acceptor.open(frame.prefix(count)) == nil, "first \(count) bytes")
            #expect(acceptor.open(frame.suffix(count)) == nil, "last \(count) bytes")
        }
        #expect(acceptor.open(frame + [0]) == nil)
        #expect(acceptor.open(frame) != nil)
    }

    @Test func everyFlippedBitIsRefused() throws {
        var (dialer, acceptor) = Self.connection()
        let frame = try dialer.seal(Array("do not touch".utf8))
        for index in frame.indices {
            for bit in 0..<8 {
                var altered = frame
                altered[index] ^= 1 << bit
                #expect(acceptor.open(altered) == nil, "byte \(index) bit \(bit)")
            }
        }
        #expect(acceptor.open(frame) == Array("do not touch".utf8))
    }

    @Test func theTwoDirectionsHaveDifferentKeysSoAReflectedFrameIsRefused() throws {
        let keys = FrameSeal.directionKeys(secret: Self.secret, dialerNonce: Self.dialerNonce, acceptorNonce: Self.acceptorNonce)
        #expect(keys.dialerToAcceptor != keys.acceptorToDialer)
        #expect(keys.dialerToAcceptor.count == 32 && keys.acceptorToDialer.count == 32)
        // A frame the dialer sent, played back to the dialer, does not open.
        var (dialer, _) = Self.connection()
        let frame = try dialer.seal(Array("hello".utf8))
        #expect(dialer.open(frame) == nil)
    }

    @Test func otherNoncesOrAnotherSecretGiveOtherKeys() {
        let base = FrameSeal.directionKeys(secret: Self.secret, dialerNonce: Self.dialerNonce, acceptorNonce: Self.acceptorNonce)
        var otherDialerNonce = Self.dialerNonce
        otherDialerNonce[31] ^= 1
        var otherAcceptorNonce = Self.acceptorNonce
        otherAcceptorNonce[0] ^= 1
        let variants = [
            FrameSeal.directionKeys(secret: Self.secret, dialerNonce: otherDialerNonce, acceptorNonce: Self.acceptorNonce),
            FrameSeal.directionKeys(secret: Self.secret, dialerNonce: Self.dialerNonce, acceptorNonce: otherAcceptorNonce),
            // The roles swapped: the same two nonces, the other way round.
            FrameSeal.directionKeys(secret: Self.secret, dialerNonce: Self.acceptorNonce, acceptorNonce: Self.dialerNonce),
            FrameSeal.directionKeys(secret: Self.secret + [0], dialerNonce: Self.dialerNonce, acceptorNonce: Self.acceptorNonce),
            // Bytes moved from one nonce to the other: the length prefixes tell them apart.
            FrameSeal.directionKeys(secret: Self.secret, dialerNonce: Self.dialerNonce + [0xac], acceptorNonce: Array(Self.acceptorNonce.dropFirst())),
        ]
        var seen = [base.dialerToAcceptor, base.acceptorToDialer]
        for keys in variants {
            seen += [keys.dialerToAcceptor, keys.acceptorToDialer]
        }
        #expect(Set(seen).count == seen.count)
        // And the same inputs give the same keys: both ends derive them alone.
        let again = FrameSeal.directionKeys(secret: Self.secret, dialerNonce: Self.dialerNonce, acceptorNonce: Self.acceptorNonce)
        #expect(again.dialerToAcceptor == base.dialerToAcceptor && again.acceptorToDialer == base.acceptorToDialer)
    }

    @Test func aFrameOfAnotherConnectionIsRefused() throws {
        var (dialer, _) = Self.connection()
        var (_, otherAcceptor) = Self.connection(acceptorNonce: [UInt8](repeating: 0x01, count: 32))
        #expect(try otherAcceptor.open(dialer.seal(Array("hi".utf8))) == nil)
    }

    @Test func sealRefusesOnceTheCounterReachesItsLastValueInsteadOfWrapping() throws {
        let start = UInt64.max - 2
        var dialer = FrameSeal(secret: Self.secret, dialerNonce: Self.dialerNonce, acceptorNonce: Self.acceptorNonce, role: .dialer,
                               sentFrames: start, receivedFrames: 0)
        var acceptor = FrameSeal(secret: Self.secret, dialerNonce: Self.dialerNonce, acceptorNonce: Self.acceptorNonce, role: .acceptor,
                                 sentFrames: 0, receivedFrames: start)
        #expect(try acceptor.open(dialer.seal([1])) == [1])
        #expect(try acceptor.open(dialer.seal([2])) == [2])  // frame 2^64 − 2, the last
        #expect(dialer.sentFrames == UInt64.max)
        #expect(throws: FrameSeal.Exhausted()) { try dialer.seal([3]) }
        #expect(throws: FrameSeal.Exhausted()) { try dialer.seal([3]) }
        #expect(dialer.sentFrames == UInt64.max)
        // Nor does the receiving side accept a frame past the last number.
        #expect(acceptor.receivedFrames == UInt64.max)
        #expect(acceptor.open([UInt8](repeating: 0, count: 20)) == nil)
    }
}
