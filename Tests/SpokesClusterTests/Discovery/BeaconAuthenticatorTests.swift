import Foundation
import Testing
@testable import SpokesCluster

@Suite struct BeaconAuthenticatorTests {
    let secret = try! ClusterSecret("beacon-secret-long-enough", source: "test")
    let beacon = Beacon(cluster: "c", node: NodeID(name: "a", incarnation: 1), address: "127.0.0.1:7000", slots: 4)
    let now = 1_800_000_000.0

    @Test func acceptsABeaconSealedWithTheSameSecret() {
        let sender = BeaconAuthenticator(secret: secret)
        var receiver = BeaconAuthenticator(secret: secret)
        #expect(receiver.open(sender.seal(beacon, now: now), cluster: "c", now: now + 1) == .accepted(beacon))
    }

    @Test func aSendersChangedBeaconIsReadAgainAndAnUnchangedOneSaysTheSame() {
        let sender = BeaconAuthenticator(secret: nil)
        var receiver = BeaconAuthenticator(secret: nil)
        let source = SocketAddress(host: "127.0.0.2", port: 7946)
        var changing = beacon
        #expect(receiver.open(sender.seal(changing, now: now), cluster: "c", now: now, from: source) == .accepted(changing))
        #expect(receiver.open(sender.seal(changing, now: now + 1), cluster: "c", now: now + 1, from: source) == .accepted(changing))
        changing.slots = 7
        changing.waitingSlots = 3
        #expect(receiver.open(sender.seal(changing, now: now + 2), cluster: "c", now: now + 2, from: source) == .accepted(changing))
        // Another sender's beacon, from another address, is its own.
        let other = Beacon(cluster: "c", node: NodeID(name: "b", incarnation: 2), address: "127.0.0.1:7001", slots: 1)
        #expect(receiver.open(sender.seal(other, now: now + 3), cluster: "c", now: now + 3, from: SocketAddress(host: "127.0.0.3", port: 7946)) == .accepted(other))
        #expect(receiver.open(sender.seal(changing, now: now + 4), cluster: "other", now: now + 4, from: source) == .ignored)
    }

    @Test func rejectsABeaconWithoutATagOrWithAnotherSecretsTag() throws {
        var receiver = BeaconAuthenticator(secret: secret)
        let open = BeaconAuthenticator(secret: nil).seal(beacon, now: now)
        #expect(receiver.open(open, cluster: "c", now: now) == .rejected(.unauthenticatedBeacon))
        let stranger = BeaconAuthenticator(secret: try ClusterSecret("another-secret-long-enough", source: "x"))
        #expect(receiver.open(stranger.seal(beacon, now: now), cluster: "c", now: now) == .rejected(.unauthenticatedBeacon))
    }

    @Test func rejectsABeaconWhoseContentOrClearFieldsChangedOnTheWay() throws {
        let sealed = BeaconAuthenticator(secret: secret).seal(beacon, now: now)
        var envelope = try JSONDecoder().decode(BeaconAuthenticator.Envelope.self, from: Data(sealed))
        #expect(envelope.beacon.isEmpty && !envelope.sealed.isEmpty, "the beacon travels sealed")
        var box = try #require(Data(base64Encoded: envelope.sealed))
        box[box.count / 2] ^= 1
        var flipped = envelope
        flipped.sealed = box.base64EncodedString()
        var receiver = BeaconAuthenticator(secret: secret)
        #expect(receiver.open(Array(try JSONEncoder().encode(flipped)), cluster: "c", now: now) == .rejected(.unauthenticatedBeacon))
        envelope.time += 1
        #expect(receiver.open(Array(try JSONEncoder().encode(envelope)), cluster: "c", now: now) == .rejected(.unauthenticatedBeacon),
                "the clear time is authenticated with the box")
    }

    @Test func rejectsTheSameBeaconTwice() {
        var receiver = BeaconAuthenticator(secret: secret)
        let sealed = BeaconAuthenticator(secret: secret).seal(beacon, now: now)
        #expect(receiver.open(sealed, cluster: "c", now: now) == .accepted(beacon))
        #expect(receiver.open(sealed, cluster: "c", now: now + 5) == .rejected(.replayedBeacon))
    }

    @Test func rejectsABeaconStampedOutsideTheWindow() {
        var receiver = BeaconAuthenticator(secret: secret)
        let sender = BeaconAuthenticator(secret: secret)
        let window = BeaconAuthenticator.replayWindow
        #expect(receiver.open(sender.seal(beacon, now: now - window - 1), cluster: "c", now: now) == .rejected(.replayedBeacon))
        #expect(receiver.open(sender.seal(beacon, now: now + window + 1), cluster: "c", now: now) == .rejected(.replayedBeacon))
        #expect(receiver.open(sender.seal(beacon, now: now - window + 1), cluster: "c", now: now) == .accepted(beacon))
    }

    @Test func anOpenClusterAcceptsPlainBeaconsAndIgnoresSealedOnes() {
        var receiver = BeaconAuthenticator(secret: nil)
        #expect(receiver.open(BeaconAuthenticator(secret: nil).seal(beacon, now: now), cluster: "c", now: now) == .accepted(beacon))
        #expect(receiver.open(BeaconAuthenticator(secret: secret).seal(beacon, now: now), cluster: "c", now: now) == .ignored)
    }

    @Test func ignoresOtherClustersAndRejectsJunk() {
        var receiver = BeaconAuthenticator(secret: secret)
        let sender = BeaconAuthenticator(secret: secret)
        #expect(receiver.open(sender.seal(beacon, now: now), cluster: "other", now: now) == .ignored)
        #expect(receiver.open(Array("not json".utf8), cluster: "c", now: now) == .rejected(.malformedBeacon))
        #expect(receiver.open([UInt8](repeating: 0x7B, count: Beacon.maximumBeaconSize + 1), cluster: "c", now: now) == .rejected(.malformedBeacon))
    }
}
