import Distributed
import SpokesConcurrency

/// One line of `spokes status`: a member as the answering node sees it.
public struct MemberStatus: Sendable, Hashable, Codable {
    public var name: String
    public var address: String
    public var state: String
    public var incarnation: String
    /// Cpu slots it announced (``TaskCost/cpu``).
    public var slots: Int
    /// Waiting slots it announced (``TaskCost/waiting``).
    public var waitingSlots: Int
    /// Cpu slots in use there now (known for the answering node itself).
    public var slotsInUse: Int?
    /// Waiting slots in use there now (known for the answering node itself).
    public var waitingSlotsInUse: Int?
    /// Tasks running on that node now, of either cost (known for the answering node itself).
    public var running: Int?
    /// Tasks completed on that node (known for the answering node itself).
    public var completed: Int?
    /// Seconds the answering node has been up (known for itself).
    public var uptime: Double?
    /// Where the answering node serves its dashboard, `http://host:port/` without the
    /// token (known for itself, when it serves one).
    public var dashboard: String?
    /// The task kinds it runs: known for the answering node itself, and for members a
    /// job of this node has asked (``ClusterNode/kinds(of:)``).
    public var kinds: [TaskSchema]? = nil
    /// The wire protocol versions it speaks (its handshake's); absent from an answer of a
    /// release of protocol 3, whose members all speak 3 alone.
    public var protocolVersions: ProtocolVersions? = nil
}

extension MemberStatus {
    /// The protocol versions it speaks: ``protocolVersions``, or protocol 3 alone when the
    /// answer did not say (``ProtocolVersions/unreported``).
    public var speaks: ProtocolVersions { protocolVersions ?? .unreported }
}

/// Every node's well-known status actor (name `status`): what `spokes status` asks.
public distributed actor NodeStatus {
    public typealias ActorSystem = ClusterSystem

    /// The well-known name under which every node hosts its status actor.
    public static let wellKnownName = "status"

    private let report: @Sendable () -> [MemberStatus]
    private let observation: @Sendable (UInt64) async -> NodeObservation?
    private let stopAction: @Sendable () -> (@Sendable () -> Void)?

    /// `stop` gives what to do when a client asks the node to stop; nil (the default)
    /// refuses.
    public init(
        actorSystem: ClusterSystem, report: @escaping @Sendable () -> [MemberStatus],
        observe: @escaping @Sendable (UInt64) async -> NodeObservation? = { _ in nil },
        stop: @escaping @Sendable () -> (@Sendable () -> Void)? = { nil }
    ) {
        self.actorSystem = actorSystem
        self.report = report
        observation = observe
        stopAction = stop
    }

    /// This node first, then every member it knows, by name.
    public distributed func members() -> [MemberStatus] {
        report()
    }

    /// What the dashboard polls: this node's counts, the task attempts its worker ended
    /// after sequence `tasksAfter` (pass back the last answer's `lastTaskSequence`; 0 at
    /// first) and those running, its jobs, its heartbeat round trips and its replicated groups.
    public distributed func observe(tasksAfter: UInt64) async throws -> NodeObservation {
        guard let observation = await observation(tasksAfter) else { throw RemoteCallError.actorNotFound("\(id.node.name) is stopping") }
        return observation
    }

    /// Asks this node to leave the cluster and exit, as SIGTERM does (`spokes stop`);
    /// answers with its name, then stops. Only a client that got in may ask: in a cluster
    /// with a secret, one that holds it.
    public distributed func stop() throws -> String {
        guard let action = stopAction() else {
            throw RemoteCallError.remoteError(type: "StopRefused", message: "\(id.node.name) cannot be stopped from a client (it is not run by 'spokes node')", node: id.node.name)
        }
        actorSystem.log("a client asked this node to stop")
        // After the reply is on its way: the stop closes every connection.
        Task { action() }
        return id.node.name
    }

    /// Changes this node's keyring (`spokes keyring`) and answers with it as it is then.
    /// Only a client that got in may ask: one that holds an installed secret. Refused
    /// with the reason (never a secret) in an open cluster, for a secret too short, or a
    /// fingerprint that is not installed or is the primary's (to remove). A change is
    /// answered once it is saved in the node's folder (``KeyringFile``); one that could
    /// not be saved holds until the node stops, and the answer says so.
    public distributed func keyring(_ change: KeyringChange) async throws -> KeyringState {
        guard let keyring = actorSystem.keyring else {
            throw RemoteCallError.remoteError(type: "NoKeyring", message: "\(id.node.name) runs an open cluster (no secret): it has no keyring", node: id.node.name)
        }
        let changed: Keyring
        do {
            changed = try keyring.update { keyring throws(KeyringError) in
                switch change {
                case .list: break
                case .install(let text):
                    do {
                        keyring.install(try ClusterSecret(text, source: "the installed secret"))
                    } catch {
                        throw .invalidSecret("\(error)")
                    }
                case .use(let fingerprint): try keyring.use(fingerprint)
                case .remove(let fingerprint): try keyring.remove(fingerprint)
                }
            }
        } catch {
            throw RemoteCallError.remoteError(type: "KeyringRefused", message: "\(error)", node: id.node.name)
        }
        guard change != .list else { return KeyringState(changed) }
        actorSystem.log("keyring: \(change.summary); primary \(changed.primary.fingerprint), installed \(changed.fingerprints.joined(separator: ", "))")
        do {
            try await keyring.save()
        } catch {
            actorSystem.log("\(error); the change holds until this node stops", level: .warning)
            throw RemoteCallError.remoteError(
                type: "KeyringNotSaved", message: "\(error); the change holds until this node stops, then it starts from its files", node: id.node.name)
        }
        return KeyringState(changed)
    }

    /// What this node has turned away, by ``Rejection`` raw value (zeros included).
    public distributed func rejected() -> [String: Int] {
        actorSystem.rejections.snapshot
    }

    /// Answers with this node's name after `delay` seconds (0 to 60; others are refused
    /// with ``OutOfRange``): measures round trips, and gives tests a call that stays in flight.
    public distributed func ping(delay: Double = 0) async throws -> String {
        try OutOfRange.check("ping delay", delay, in: 0...60, unit: " seconds")
        if delay > 0 { try await actorSystem.runtime.sleep(for: delay) }
        return id.node.name
    }
}
