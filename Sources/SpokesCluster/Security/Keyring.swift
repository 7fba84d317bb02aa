import SpokesConcurrency
import Synchronization

/// The secrets a node holds: one primary, which seals everything it sends, and any others
/// it still accepts, so the cluster's secret can change while it runs (as Consul's
/// `keyring -install / -use / -remove`). A rotation: install the new secret on every
/// member (each now accepts both), make it primary everywhere (each now seals with it;
/// the old one still opens what a slower member sends), then remove the old one (from
/// then on it opens nothing, and connections sealed with it are closed and dialled
/// again). Secrets are named by their fingerprints.
///
/// Invariant: the primary is always installed, and is never removed.
public struct Keyring: Sendable, Hashable {
    /// The secret everything is sealed with.
    public private(set) var primary: ClusterSecret
    /// Every installed secret, the primary first, then in the order installed.
    public private(set) var secrets: [ClusterSecret]

    public init(primary: ClusterSecret, accepting others: [ClusterSecret] = []) {
        self.primary = primary
        secrets = [primary]
        for secret in others where !secrets.contains(secret) { secrets.append(secret) }
    }

    /// Installs `secret` (accepted from now on, not yet used); false if it was already.
    @discardableResult
    public mutating func install(_ secret: ClusterSecret) -> Bool {
        guard !secrets.contains(secret) else { return false }
        secrets.append(secret)
        return true
    }

    /// Makes the installed secret with `fingerprint` the primary.
    public mutating func use(_ fingerprint: String) throws(KeyringError) {
        let secret = try installed(fingerprint)
        primary = secret
        secrets.removeAll { $0 == secret }
        secrets.insert(secret, at: 0)
    }

    /// Removes the installed secret with `fingerprint`; never the primary.
    public mutating func remove(_ fingerprint: String) throws(KeyringError) {
        let secret = try installed(fingerprint)
        guard secret != primary else { throw .removingPrimary(fingerprint) }
        secrets.removeAll { $0 == secret }
    }

    /// The fingerprints of every installed secret, the primary first.
    public var fingerprints: [String] { secrets.map(\.fingerprint) }

    private func installed(_ fingerprint: String) throws(KeyringError) -> ClusterSecret {
        guard let secret = secrets.first(where: { $0.fingerprint == fingerprint }) else {
            throw .notInstalled(fingerprint, installed: fingerprints)
        }
        return secret
    }
}

/// Why a keyring refused a change.
public enum KeyringError: Error, Sendable, Equatable, CustomStringConvertible {
    case notInstalled(String, installed: [String])
    case removingPrimary(String)
    /// A secret to install that is not one (too short); says why, never what.
    case invalidSecret(String)

    public var description: String {
        switch self {
        case .notInstalled(let fingerprint, let installed):
            "no secret with fingerprint \(fingerprint) is installed (installed: \(installed.joined(separator: ", ")))"
        case .removingPrimary(let fingerprint):
            "\(fingerprint) is the primary secret: make another one primary ('spokes keyring use ID') before removing it"
        case .invalidSecret(let reason):
            reason
        }
    }
}

/// The keys one secret gives, derived once: the handshake's proofs, and the boxes of
/// handshake frames, beacons and probes.
struct KeyMaterial: Sendable {
    let secret: ClusterSecret
    let handshake: HandshakeAuthentication
    let handshakeFrames: SealedBox
    let beacons: SealedBox
    let probes: SealedBox

    init(_ secret: ClusterSecret) {
        self.secret = secret
        handshake = HandshakeAuthentication(secret: secret)
        handshakeFrames = SealedBox(secret: secret, purpose: .handshakeFrames)
        beacons = SealedBox(secret: secret, purpose: .beaconContents)
        probes = SealedBox(secret: secret, purpose: .probeContents)
    }
}

/// A node's live keyring, shared by everything that seals or opens (connections,
/// discovery, probes): each reads the keyring as it is at that moment, so a change
/// applies to the next frame, beacon or probe. Observers hear every change (the
/// cluster system closes connections sealed with a removed secret).
public final class KeyringStore: Sendable {
    private struct State {
        var keyring: Keyring
        var materials: [KeyMaterial]
        var observers: [@Sendable (Keyring) -> Void] = []
        var file: KeyringFile?
    }

    private let state: Mutex<State>
    /// Held while the file is written, so two saves never cross (an older keyring
    /// written after a newer one).
    private let saving = Mutex(())

    public init(_ keyring: Keyring) {
        state = Mutex(State(keyring: keyring, materials: keyring.secrets.map(KeyMaterial.init)))
    }

    /// The keyring now.
    public var keyring: Keyring { state.withLock { $0.keyring } }

    /// The primary secret's keys: what this node seals with.
    var primary: KeyMaterial { state.withLock { $0.materials[0] } }

    /// Every installed secret's keys, the primary first: what this node opens with.
    var all: [KeyMaterial] { state.withLock { $0.materials } }

    /// Changes the keyring with `change` (which may throw, leaving it as it was), then
    /// tells the observers. Returns the keyring after the change.
    @discardableResult
    public func update(_ change: (inout Keyring) throws(KeyringError) -> Void) throws(KeyringError) -> Keyring {
        let (keyring, observers) = try state.withLock { state throws(KeyringError) in
            var keyring = state.keyring
            try change(&keyring)
            let known = Dictionary(state.materials.map { ($0.secret, $0) }, uniquingKeysWith: { first, _ in first })
            state.materials = keyring.secrets.map { known[$0] ?? KeyMaterial($0) }
            state.keyring = keyring
            return (keyring, state.observers)
        }
        for observer in observers { observer(keyring) }
        return keyring
    }

    /// Keeps the keyring in `file` from now on (``save()``), so a restarted node starts
    /// from what `spokes keyring` last made of it.
    public func keep(in file: KeyringFile) {
        state.withLock { $0.file = file }
    }

    /// Writes the keyring as it is now to its file, if it has one; on a thread of its own.
    public func save() async throws(KeyringFileError) {
        let result: Result<Void, KeyringFileError> = await runBlocking("keyring-save") { [self] in
            saving.withLock { _ in
                let (keyring, file) = state.withLock { ($0.keyring, $0.file) }
                guard let file else { return .success(()) }
                return Result { () throws(KeyringFileError) in try file.save(keyring) }
            }
        }
        try result.get()
    }

    /// Calls `observer` after every change.
    public func observe(_ observer: @escaping @Sendable (Keyring) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }
}

/// What `spokes keyring` asks of each member (``NodeStatus/keyring(_:)``).
public enum KeyringChange: Sendable, Codable, Hashable {
    /// Nothing: only the answer.
    case list
    /// Accept this secret (its text; it travels only in a sealed frame).
    case install(secret: String)
    /// Seal with the installed secret of this fingerprint.
    case use(fingerprint: String)
    /// Stop accepting the installed secret of this fingerprint.
    case remove(fingerprint: String)

    /// What it does, for a log line (never the secret).
    var summary: String {
        switch self {
        case .list: "listed"
        case .install: "installed a secret"
        case .use(let fingerprint): "now seals with \(fingerprint)"
        case .remove(let fingerprint): "removed \(fingerprint)"
        }
    }
}

/// A member's keyring as it answers: fingerprints only.
public struct KeyringState: Sendable, Codable, Hashable {
    public var primary: String
    /// Every installed secret's fingerprint, the primary first.
    public var installed: [String]

    public init(_ keyring: Keyring) {
        primary = keyring.primary.fingerprint
        installed = keyring.fingerprints
    }
}
