import SpokesClusterTestKit
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesCluster

@Suite struct KeyringTests {
    static let old = try! ClusterSecret("the-old-cluster-secret-text", source: "test")
    static let new = try! ClusterSecret("the-new-cluster-secret-text", source: "test")

    @Test func aRotationInstallsUsesThenRemovesAndThePrimaryIsAlwaysInstalled() throws {
        var keyring = Keyring(primary: Self.old)
        let first = keyring.install(Self.new)
        let again = keyring.install(Self.new)
        #expect(first && !again, "installing twice changes nothing")
        #expect(keyring.fingerprints == [Self.old.fingerprint, Self.new.fingerprint])
        #expect(throws: KeyringError.removingPrimary(Self.old.fingerprint)) { try keyring.remove(Self.old.fingerprint) }
        try keyring.use(Self.new.fingerprint)
        #expect(keyring.primary == Self.new && keyring.fingerprints == [Self.new.fingerprint, Self.old.fingerprint])
        try keyring.remove(Self.old.fingerprint)
        #expect(keyring.secrets == [Self.new])
        #expect(throws: KeyringError.notInstalled(Self.old.fingerprint, installed: [Self.new.fingerprint])) { try keyring.use(Self.old.fingerprint) }
    }

    @Test func aBeaconOrProbeSealedWithEitherInstalledSecretOpensAndARemovedOneDoesNot() throws {
        let store = KeyringStore(Keyring(primary: Self.new, accepting: [Self.old]))
        var receiver = BeaconAuthenticator(keyring: store)
        let beacon = WireMessage.Handshake(cluster: "c", node: NodeID(name: "a", incarnation: 1), address: "127.0.0.1:7000", slots: 1,
                                           authenticated: true, nonce: "")
        #expect(receiver.open(BeaconAuthenticator(secret: Self.old).seal(beacon, now: 100), cluster: "c", now: 100) == .accepted(beacon))
        #expect(receiver.open(BeaconAuthenticator(secret: Self.new).seal(beacon, now: 100), cluster: "c", now: 100) == .accepted(beacon))
        let ping = Prober.Message.ping(nonce: 1, from: NodeID(name: "a", incarnation: 1))
        #expect(ProbeSeal(keyring: store).open(ProbeSeal(secret: Self.old).seal(ping)) == .accepted(ping))
        try store.update { (keyring: inout Keyring) throws(KeyringError) in try keyring.remove(Self.old.fingerprint) }
        #expect(receiver.open(BeaconAuthenticator(secret: Self.old).seal(beacon, now: 100), cluster: "c", now: 100) == .rejected(.unauthenticatedBeacon))
        #expect(ProbeSeal(keyring: store).open(ProbeSeal(secret: Self.old).seal(ping)) == .rejected(.unauthenticatedProbe))
        var holderOfTheOld = BeaconAuthenticator(secret: Self.old)
        #expect(holderOfTheOld.open(BeaconAuthenticator(keyring: store).seal(beacon, now: 100), cluster: "c", now: 100)
                == .rejected(.unauthenticatedBeacon), "what a node sends is sealed with its primary")
    }
}

/// A secret changed under a running cluster, on the simulated network in virtual time.
@Suite(.simulated, .hangGuard)
struct KeyringRotationTests {
    @Test func aRotationUnderCallsLosesNoCallJudgesNobodyAndThenTheOldSecretIsRefused() async throws {
        let cluster = try SimulatedCluster(3, configure: { _, settings in settings.secret = KeyringTests.old })
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let host = ClusterSystem.withWellKnownName("greeter") { Greeter(actorSystem: cluster[2].system) }
        defer { withExtendedLifetime(host) {} }
        let greeter = try Greeter.resolve(id: ActorID(node: cluster[2].system.node, name: "greeter"), using: cluster[0].system)
        // A call every 10 ms of virtual time all along, and a watch on every node's view
        // of the others.
        let answered = Mutex(0)
        let failures = Mutex<[String]>([])
        let clock = cluster.clock
        let calls = Task {
            var index = 0
            while !Task.isCancelled {
                do {
                    _ = try await greeter.greet("\(index)")
                    answered.withLock { $0 += 1 }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                index += 1
                try? await clock.sleep(for: 0.01)
            }
        }
        defer { calls.cancel() }
        let judged = Mutex<[String]>([])
        func watch() {
            for node in cluster.nodes {
                for member in node.members where member.state != .alive {
                    judged.withLock { $0.append("\(node.system.node.name) saw \(member.node.name) \(member.state)") }
                }
            }
        }
        func step(_ what: String, _ change: (inout Keyring) throws(KeyringError) -> Void) async throws {
            // Node by node, a little apart, as 'spokes keyring' asks them.
            for node in cluster.nodes {
                try node.system.keyring!.update(change)
                try await cluster.run(for: 0.02)
            }
            let end = cluster.clock.now + 1
            try await cluster.run(until: what, within: 2) {
                watch()
                return cluster.clock.now >= end
            }
        }
        try await step("the new secret is installed") { (keyring: inout Keyring) throws(KeyringError) in keyring.install(KeyringTests.new) }
        try await step("the new secret is used") { (keyring: inout Keyring) throws(KeyringError) in try keyring.use(KeyringTests.new.fingerprint) }
        try await step("the old secret is removed") { (keyring: inout Keyring) throws(KeyringError) in try keyring.remove(KeyringTests.old.fingerprint) }
        // Past the handshake timeout, when the replaced connections are closed.
        let settled = cluster.clock.now + cluster[0].settings.handshakeTimeout + 2
        try await cluster.run(until: "the replaced connections are closed", within: 10) { watch(); return cluster.clock.now >= settled }
        let before = answered.withLock { $0 }
        try await cluster.run(until: "calls go on after the rotation", within: 5) { watch(); return answered.withLock { $0 } > before + 10 }
        calls.cancel()
        #expect(failures.withLock { $0 } == [], "no call failed")
        #expect(judged.withLock { $0 } == [], "nobody was suspected or declared dead")
        #expect(cluster.nodes.allSatisfy { $0.system.keyring!.keyring.secrets == [KeyringTests.new] })
        for node in cluster.nodes {
            let secrets = node.system.registeredConnectionSecrets
            #expect(secrets.count == 2 && secrets.values.allSatisfy { $0 == KeyringTests.new.fingerprint },
                    "\(node.system.node.name)'s connections were replaced: \(secrets)")
        }

        // A node that holds only the old secret is refused, told the secrets differ.
        let late = try ClusterSystem(settings: { var settings = ClusterSettings(); settings.cluster = "simulated"; settings.nodeName = "late"
            settings.host = "127.0.0.9"; settings.port = 7000; settings.secret = KeyringTests.old; return settings }(),
            runtime: Runtime.virtual(cluster.clock, network: cluster.network.host("127.0.0.9")))
        defer { late.shutdown() }
        let outcome = Mutex<String?>(nil)
        let dial = Task {
            do { _ = try await late.join(cluster[0].system.address); outcome.withLock { $0 = "joined" } } catch { outcome.withLock { $0 = "\(error)" } }
        }
        try await cluster.run(until: "the late node's dial ends", within: 5) { outcome.withLock { $0 } != nil }
        await dial.value
        #expect(outcome.withLock { $0 }?.contains(Connection.differentSecretsRefusal) == true, "\(outcome.withLock { $0 } ?? "")")
    }
}
