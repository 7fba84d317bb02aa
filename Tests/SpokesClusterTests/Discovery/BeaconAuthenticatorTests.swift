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

    @Test func rejectsABeaconWithoutATagOrWithAnotherSecretsTag() throws {
        var receiver = BeaconAuthenticator(secret: secret)
        let open = BeaconAuthenticator(secret: nil).seal(beacon, now: now)
        #expect(receiver.open(open, cluster: "c", now: now) == .rejected(.unauthenticatedBeacon))
        let stranger = BeaconAuthenticator(secret: try ClusterSecret("another-secret-long-enough", source: "x"))
        #expect(receiver.open(stranger.seal(beacon, now: now), cluster: "c", now: now) == .rejected(.unauthenticatedBeacon))
    }

    @Test func rejectsABeaconWhoseContentChangedOnTheWay() throws {
        var receiver = BeaconAuthenticator(secret: secret)
        let sealed = String(decoding: BeaconAuthenticator(secret: secret).seal(beacon, now: now), as: UTF8.self)
        let moved = sealed.replacingOccurrences(of: "7000", with: "7001")
        #expect(moved != sealed)
        #expect(receiver.open(Array(moved.utf8), cluster: "c", now: now) == .rejected(.unauthenticatedBeacon))
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
