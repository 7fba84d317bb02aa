// swift-tools-version: 6.0
//
// Spokes: a zero-dependency Swift worker cluster.
// Toolchain only: this manifest declares no package dependencies, and must not.
// Linux only for now (tried: Swift 6.3.1 on Debian 12); see README, "Systems".
import PackageDescription

let package = Package(
    name: "Spokes",
    products: [
        .library(name: "SpokesConcurrency", targets: ["SpokesConcurrency"]),
        .library(name: "SpokesTransport", targets: ["SpokesTransport"]),
        .library(name: "SpokesHTTP", targets: ["SpokesHTTP"]),
        .library(name: "SpokesCrypto", targets: ["SpokesCrypto"]),
        .library(name: "SpokesCluster", targets: ["SpokesCluster"]),
        .library(name: "SpokesBikes", targets: ["SpokesBikes"]),
        .library(name: "SpokesBikesWeb", targets: ["SpokesBikesWeb"]),
        .library(name: "SpokesDashboard", targets: ["SpokesDashboard"]),
        // The whole command-line tool as a library: an app's executable registers its own
        // task kinds and calls SpokesTool.main(kinds:) (README, "Your own tasks").
        .library(name: "SpokesCLI", targets: ["SpokesCLI"]),
        .library(name: "SpokesConsensus", targets: ["SpokesConsensus"]),
        .library(name: "SpokesSimulation", targets: ["SpokesSimulation"]),
        .library(name: "SpokesReplication", targets: ["SpokesReplication"]),
        .library(name: "SpokesJobs", targets: ["SpokesJobs"]),
        .library(name: "SpokesNode", targets: ["SpokesNode"]),
        .library(name: "SpokesSimulatedCluster", targets: ["SpokesSimulatedCluster"]),
        .executable(name: "spokes", targets: ["spokes"]),
        // The membership simulator from the command line (Scripts/simulate-cluster); not part of `spokes`.
        .executable(name: "simulate-cluster", targets: ["simulate-cluster"]),
    ],
    dependencies: [],
    targets: [
        .target(name: "SpokesConcurrency"),
        .target(name: "SpokesTransport", dependencies: ["SpokesConcurrency"]),
        .target(name: "SpokesHTTP", dependencies: ["SpokesTransport", "SpokesConcurrency"]),
        // Pure cryptographic building blocks: hashes, MACs, the AEAD, key derivation, sealed frames.
        .target(name: "SpokesCrypto"),
        .target(name: "SpokesCluster", dependencies: ["SpokesCrypto", "SpokesTransport", "SpokesConcurrency"]),
        .target(name: "SpokesBikes", dependencies: ["SpokesJobs", "SpokesCluster", "SpokesConcurrency", "SpokesReplication", "SpokesConsensus"]),
        // Fetching networks over HTTP(S) needs FoundationNetworking, which links libcurl and
        // about 30 libraries more (6 MiB of an idle node's memory): kept out of the node.
        .target(name: "SpokesBikesWeb", dependencies: ["SpokesBikes"]),
        .target(name: "SpokesDashboard", dependencies: ["SpokesBikes", "SpokesJobs", "SpokesCluster", "SpokesHTTP", "SpokesConcurrency"],
                exclude: ["Page/Assets"]),  // embedded by Scripts/embed-resources
        // A node's job machinery wired once, for `spokes node` and the simulator's whole nodes.
        .target(name: "SpokesNode", dependencies: ["SpokesBikes", "SpokesJobs", "SpokesReplication", "SpokesCluster", "SpokesConcurrency"]),
        .target(name: "SpokesCLI", dependencies: ["SpokesDashboard", "SpokesBikes", "SpokesJobs", "SpokesCluster", "SpokesConcurrency", "SpokesConsensus", "SpokesNode"]),
        .executableTarget(name: "spokes", dependencies: ["SpokesCLI"]),
        .target(name: "SpokesConsensus", dependencies: ["SpokesConcurrency"]),
        // Whole ClusterNodes (with their desk for jobs of tasks) on one simulated network in
        // virtual time: the tests' and the simulator's.
        .target(name: "SpokesSimulatedCluster", dependencies: ["SpokesJobs", "SpokesCluster", "SpokesConcurrency"]),
        .target(name: "SpokesSimulation", dependencies: ["SpokesConsensus", "SpokesCluster", "SpokesBikes", "SpokesJobs", "SpokesNode", "SpokesSimulatedCluster", "SpokesConcurrency"]),
        .executableTarget(name: "simulate-cluster", dependencies: ["SpokesSimulation"]),
        // The Raft host: every replicated group of a node over one endpoint and one folder.
        .target(name: "SpokesReplication", dependencies: ["SpokesCluster", "SpokesConsensus", "SpokesConcurrency"]),
        // The job layer, which knows no workload: the node's job desk (list, locate,
        // cancel), its store of finished jobs, and the replicated jobs of tasks.
        .target(name: "SpokesJobs", dependencies: ["SpokesReplication", "SpokesCluster", "SpokesConsensus", "SpokesConcurrency"]),
        // What every test target shares (temporary folders that are always removed).
        .target(name: "SpokesTestKit", dependencies: ["SpokesConcurrency"], path: "Tests/SpokesTestKit"),
        // The in-process cluster builder the cluster, bikes, dashboard and CLI tests share.
        .target(name: "SpokesClusterTestKit", dependencies: ["SpokesJobs", "SpokesReplication", "SpokesCluster", "SpokesConcurrency", "SpokesTestKit", "SpokesSimulatedCluster"], path: "Tests/SpokesClusterTestKit"),
        .testTarget(name: "SpokesConcurrencyTests", dependencies: ["SpokesConcurrency", "SpokesTestKit"]),
        .testTarget(name: "SpokesTransportTests", dependencies: ["SpokesTransport", "SpokesConcurrency", "SpokesTestKit"]),
        .testTarget(name: "SpokesHTTPTests", dependencies: ["SpokesHTTP", "SpokesTransport", "SpokesConcurrency", "SpokesTestKit", "SpokesClusterTestKit"]),
        .testTarget(name: "SpokesCryptoTests", dependencies: ["SpokesCrypto", "SpokesTestKit"],
                    resources: [.copy("Vectors")]),  // Wycheproof's JSON files and their licence
        .testTarget(name: "SpokesClusterTests", dependencies: ["SpokesJobs", "SpokesCluster", "SpokesConcurrency", "SpokesTestKit", "SpokesClusterTestKit"]),
        .testTarget(name: "SpokesBikesTests", dependencies: ["SpokesBikes", "SpokesJobs", "SpokesBikesWeb", "SpokesCluster", "SpokesConcurrency", "SpokesTestKit", "SpokesClusterTestKit"]),
        .testTarget(name: "SpokesJobsTests", dependencies: ["SpokesJobs", "SpokesReplication", "SpokesCluster", "SpokesConcurrency", "SpokesTestKit", "SpokesClusterTestKit"]),
        .testTarget(name: "SpokesDashboardTests", dependencies: ["SpokesDashboard", "SpokesJobs", "SpokesHTTP", "SpokesBikes", "SpokesCluster", "SpokesConcurrency", "SpokesTestKit", "SpokesClusterTestKit"]),
        .testTarget(name: "SpokesCLITests", dependencies: ["SpokesCLI", "SpokesJobs", "SpokesNode", "SpokesCluster", "SpokesTestKit", "SpokesClusterTestKit"]),
        .testTarget(name: "SpokesNodeTests", dependencies: ["SpokesNode"]),
        .testTarget(name: "SpokesConsensusTests", dependencies: ["SpokesConsensus", "SpokesConcurrency", "SpokesTestKit"]),
        .testTarget(name: "SpokesSimulationTests", dependencies: ["SpokesSimulation", "SpokesJobs", "SpokesConsensus", "SpokesConcurrency", "SpokesTestKit"]),
        .testTarget(name: "SpokesReplicationTests", dependencies: ["SpokesReplication", "SpokesJobs", "SpokesCluster", "SpokesConsensus", "SpokesConcurrency", "SpokesTestKit", "SpokesClusterTestKit"]),
    ],
    swiftLanguageModes: [.v6]
)
