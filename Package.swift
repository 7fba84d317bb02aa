// swift-tools-version: 6.0
//
// Spokes: a zero-dependency Swift worker cluster.
// Toolchain only: this manifest declares no package dependencies, and must not.
import PackageDescription

let package = Package(
    name: "Spokes",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SpokesConcurrency", targets: ["SpokesConcurrency"]),
        .library(name: "SpokesCluster", targets: ["SpokesCluster"]),
        .library(name: "SpokesBikes", targets: ["SpokesBikes"]),
        .library(name: "SpokesDashboard", targets: ["SpokesDashboard"]),
        .library(name: "SpokesConsensus", targets: ["SpokesConsensus"]),
        .library(name: "SpokesSimulation", targets: ["SpokesSimulation"]),
        .executable(name: "spokes", targets: ["spokes"]),
    ],
    dependencies: [],
    targets: [
        .target(name: "SpokesConcurrency"),
        .target(name: "SpokesCluster", dependencies: ["SpokesConcurrency"]),
        .target(name: "SpokesBikes", dependencies: ["SpokesCluster", "SpokesConcurrency"]),
        .target(name: "SpokesDashboard", dependencies: ["SpokesBikes", "SpokesCluster", "SpokesConcurrency"]),
        .target(name: "SpokesCLI", dependencies: ["SpokesDashboard", "SpokesBikes", "SpokesCluster", "SpokesConcurrency"]),
        .executableTarget(name: "spokes", dependencies: ["SpokesCLI"]),
        .target(name: "SpokesConsensus"),
        .target(name: "SpokesSimulation", dependencies: ["SpokesConsensus"]),
        .testTarget(name: "SpokesConcurrencyTests", dependencies: ["SpokesConcurrency"]),
        .testTarget(name: "SpokesClusterTests", dependencies: ["SpokesCluster", "SpokesConcurrency"]),
        .testTarget(name: "SpokesBikesTests", dependencies: ["SpokesBikes", "SpokesCluster", "SpokesConcurrency"]),
        .testTarget(name: "SpokesDashboardTests", dependencies: ["SpokesDashboard", "SpokesBikes", "SpokesCluster", "SpokesConcurrency"]),
        .testTarget(name: "SpokesCLITests", dependencies: ["SpokesCLI", "SpokesCluster"]),
        .testTarget(name: "SpokesConsensusTests", dependencies: ["SpokesConsensus"]),
        .testTarget(name: "SpokesSimulationTests", dependencies: ["SpokesSimulation", "SpokesConsensus"]),
    ],
    swiftLanguageModes: [.v6]
)
