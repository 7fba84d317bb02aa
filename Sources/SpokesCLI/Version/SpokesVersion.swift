import SpokesCluster
import SpokesDashboard

/// What this build of Spokes is: its release version, the wire protocol versions it
/// speaks, the git commit it was built from and the platform it runs on. `spokes version`
/// prints it; the metrics endpoint exports it as `spokes_build_info`; `Scripts/package`
/// names its tarball from `spokes version --json`, so the version is written here only.
public enum SpokesVersion {
    /// The release version (semantic versioning): the one place it is written.
    public static let release = "0.4.0"

    /// The wire protocol versions this build speaks, lowest to highest
    /// (``ProtocolVersions/current``): its own and the one before, so it works with the
    /// previous release (Docs/upgrades.md).
    public static var protocolVersions: ClosedRange<Int> {
        ProtocolVersions.current.lowest...ProtocolVersions.current.highest
    }

    /// The git commit this binary was built from (12 hex digits, `-dirty` when tracked
    /// files had uncommitted changes), or nil when it is not known: only builds made by
    /// `Scripts/package` are stamped (see ``BuildStamp``).
    public static var commit: String? {
        BuildStamp.stampedCommit
    }

    /// `linux-x86_64`, `linux-aarch64`: the operating system and architecture this binary
    /// was built for, as `uname -s`/`uname -m` name them (and the tarball's name does).
    public static var platform: String {
        #if arch(x86_64)
        let architecture = "x86_64"
        #elseif arch(arm64)
        let architecture = "aarch64"
        #else
        let architecture = "unknown"
        #endif
        return "linux-" + architecture
    }

    /// This build as `GET /metrics` names it in `spokes_build_info`.
    public static var metricsBuild: NodeMetrics.Build {
        NodeMetrics.Build(version: release, commit: commit ?? "unknown", protocolVersions: protocolDescription)
    }

    /// The protocol versions as people read them: `3`, or `3 to 4` for a range.
    public static var protocolDescription: String {
        ProtocolVersions.current.description
    }
}

/// Where `Scripts/package` stamps the git commit into a build, without the environment
/// and without touching a tracked file: for one release build it writes
/// `BuildStamp+Generated.swift` beside this file (ignored by git, removed after the
/// build), an extension of ``BuildStamp`` whose own `stampedCommit` takes the place of
/// the default below. Any other build has no such file, and its commit is unknown.
public enum BuildStamp: BuildStamping {}

/// The default of ``BuildStamp``'s commit: none. A member declared on ``BuildStamp``
/// itself (the generated file's) is preferred to this protocol extension's.
public protocol BuildStamping {
    /// The commit the build was made from, or nil when it is not known.
    static var stampedCommit: String? { get }
}

extension BuildStamping {
    /// No commit: this build was not stamped.
    public static var stampedCommit: String? { nil }
}
