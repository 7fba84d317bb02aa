// swift-tools-version: 6.0
//
// Monte Carlo pi on a Spokes cluster: the executable `pi-cluster` is the whole Spokes
// command-line tool plus one task kind of its own, `pi.sample`.
//
// This package depends on Spokes by path (the repository it sits in). In a project of
// your own, depend on it by URL instead, e.g.
//     .package(url: "https://github.com/<owner>/spokes.git", branch: "main")
import PackageDescription

let package = Package(
    name: "MonteCarloPi",
    products: [
        .executable(name: "pi-cluster", targets: ["pi-cluster"]),
        .executable(name: "pi-estimate", targets: ["pi-estimate"]),
    ],
    dependencies: [
        // `name:` because SwiftPM otherwise names a path dependency after its folder.
        .package(name: "Spokes", path: "../.."),
    ],
    targets: [
        // The kind: a library, so tests (and other programs) can use it.
        .target(name: "MonteCarloPi", dependencies: [.product(name: "SpokesCluster", package: "Spokes")]),
        // The tool: `main.swift` is one line.
        .executableTarget(name: "pi-cluster", dependencies: ["MonteCarloPi", .product(name: "SpokesCLI", package: "Spokes")]),
        // Submitting from Swift code: maps pi.sample with ClusterClient and sums the outputs.
        .executableTarget(name: "pi-estimate", dependencies: [
            "MonteCarloPi", .product(name: "SpokesCluster", package: "Spokes"), .product(name: "SpokesJobs", package: "Spokes"),
        ]),
        .testTarget(name: "MonteCarloPiTests", dependencies: ["MonteCarloPi", .product(name: "SpokesCluster", package: "Spokes")]),
    ],
    swiftLanguageModes: [.v6]
)
