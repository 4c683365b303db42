// swift-tools-version: 6.1
import PackageDescription

// Fluent (FluentKit with its SQLite driver) as a contender of ObjectGraph's benchmark suite, on W1, W2, W3 and W11.
// A package of its own, so that ObjectGraph's own build and CI never compile Fluent's stack. Run it from this folder:
//
//     OBJECTGRAPH_WITHOUT_POSTGRES=1 swift run -c release fluent-bench
let package = Package(
    name: "ObjectGraphFluentBenchmark",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The repository's own package: its benchmark suite runs raw SQLite and ObjectGraph beside Fluent.
        .package(name: "ObjectGraph", path: "../.."),
        .package(url: "https://github.com/vapor/fluent-kit", from: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver", from: "4.9.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .executableTarget(
            name: "fluent-bench",
            dependencies: [
                .product(name: "ObjectGraphBenchmarks", package: "ObjectGraph"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
