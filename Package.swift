// swift-tools-version: 6.1
import CompilerPluginSupport
import Foundation
import PackageDescription

// Leaves the PostgreSQL product out, and with it SwiftNIO and BoringSSL.
let includesPostgres = ProcessInfo.processInfo.environment["OBJECTGRAPH_WITHOUT_POSTGRES"] == nil
// The ThreadSanitizer pass of scripts/test.sh sets this: the project's own targets are compiled with ThreadSanitizer
// in the main build directory, so their dependencies (swift-syntax, GRDB, SwiftNIO) are not compiled a second time.
// A dependency's code is then not checked itself, but its locks and queues still order the accesses of the code that is.
let sanitizesThreads = ProcessInfo.processInfo.environment["OBJECTGRAPH_SANITIZE_THREADS"] != nil

let package = Package(
    name: "ObjectGraph",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "ObjectGraph", targets: ["ObjectGraph"]),
        .library(name: "PredicateFormat", targets: ["PredicateFormat"]),
        .executable(name: "objectgraph", targets: ["objectgraph"]),
        .library(name: "ObjectGraphBenchmarks", targets: ["ObjectGraphBenchmarks"]),
    ],
    traits: [
        // The tool's PostgreSQL commands (`demo --postgres`, `inspect` and `query` of a postgres:// URL, `bench
        // --postgres`): off by default, so that `swift run objectgraph demo` builds no SwiftNIO. The libraries need
        // no trait: an app that uses the ObjectGraph product alone never builds ObjectGraphPostgres.
        .trait(name: "Postgres", description: "The objectgraph tool's PostgreSQL commands (builds SwiftNIO and BoringSSL)"),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `swift package generate-documentation` (scripts/docs.sh): the DocC catalogs of ObjectGraph and PredicateFormat.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(name: "PredicateFormat", dependencies: [.product(name: "GRDB", package: "GRDB.swift")]),
        // Built for the compiler only; its tests run the compiler with it (ObjectGraphTests' EntityMacroExpansionTests).
        .macro(
            name: "ObjectGraphMacros",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        .target(
            name: "ObjectGraph",
            dependencies: [
                "PredicateFormat",
                "ObjectGraphMacros",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for stepping GRDB's prepared statements on the fetch path without per-value
                // generic decoding.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "ObjectGraphBenchmarks",
            dependencies: ["ObjectGraph", .product(name: "GRDBSQLite", package: "GRDB.swift"), .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(name: "ObjectGraphBenchmarksTests", dependencies: ["ObjectGraphBenchmarks", .product(name: "GRDB", package: "GRDB.swift")]),
        .executableTarget(
            name: "objectgraph",
            dependencies: [
                "ObjectGraph",
                "ObjectGraphBenchmarks",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(name: "PredicateFormatTests", dependencies: ["PredicateFormat", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(
            name: "ObjectGraphTests",
            // GRDBSQLite: tests lower SQLite's limits on the store's connections.
            dependencies: [
                "ObjectGraph", "ExampleStores", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

if includesPostgres {
    // A product of its own, so that users of the SQLite store do not build SwiftNIO.
    package.products.append(.library(name: "ObjectGraphPostgres", targets: ["ObjectGraphPostgres"]))
    package.dependencies.append(.package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"))
    package.targets += [
        .target(
            name: "ObjectGraphPostgres",
            dependencies: [
                "ObjectGraph",
                "PredicateFormat",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Stores written as a user writes them: the conformance suite runs on them, and scripts/outside-check.sh
        // type-checks them as code outside the package, so that they use the public API only.
        .target(name: "ExampleStores", dependencies: ["ObjectGraph"], path: "Tests/ExampleStores"),
        .testTarget(name: "ObjectGraphPostgresTests", dependencies: ["ObjectGraphPostgres", "ObjectGraph", "PredicateFormat", "ExampleStores"]),
        // W1-W3 on PostgreSQL against raw postgres-nio (`objectgraph bench --postgres URL`).
        .target(
            name: "ObjectGraphPostgresBenchmarks",
            dependencies: [
                "ObjectGraph", "ObjectGraphBenchmarks", "ObjectGraphPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "ObjectGraphPostgresBenchmarksTests", dependencies: ["ObjectGraphPostgresBenchmarks", "ObjectGraphBenchmarks"]),
    ]
    // Every store-level suite of the core runs on PostgreSQL too; the demo has --postgres, and the PostgreSQL
    // benchmarks. They test OBJECTGRAPH_POSTGRES rather than `canImport`, which a module left in the build directory
    // by an earlier build would satisfy.
    // The ThreadSanitizer pass leaves PostgreSQL out of the core's suites: SwiftNIO's code is not sanitized.
    if !sanitizesThreads, let tests = package.targets.first(where: { $0.name == "ObjectGraphTests" }) {
        tests.dependencies.append(.target(name: "ObjectGraphPostgres"))
        tests.swiftSettings = (tests.swiftSettings ?? []) + [.define("OBJECTGRAPH_POSTGRES")]
    }
    // The documentation's samples, as programs scripts/doc-samples.py writes (scripts/test.sh builds them): one
    // executable per document, found on disk, since they are generated and not kept in git.
    let samples = (try? FileManager.default.contentsOfDirectory(atPath: Context.packageDirectory + "/Sources")) ?? []
    for name in samples.sorted() where name.hasPrefix("DocSamples")
        && FileManager.default.fileExists(atPath: Context.packageDirectory + "/Sources/\(name)/main.swift") {
        package.targets.append(.executableTarget(name: name, dependencies: ["ObjectGraph", "PredicateFormat", "ObjectGraphPostgres"]))
    }
    // The tool, only with the Postgres trait (`swift run --traits Postgres objectgraph ...`).
    if let tool = package.targets.first(where: { $0.name == "objectgraph" }) {
        let postgres: TargetDependencyCondition? = .when(traits: ["Postgres"])
        tool.dependencies += ["ObjectGraphPostgres", "ObjectGraphPostgresBenchmarks"].map { .target(name: $0, condition: postgres) }
        tool.swiftSettings = (tool.swiftSettings ?? []) + [.define("OBJECTGRAPH_POSTGRES", .when(traits: ["Postgres"]))]
    }
}

if sanitizesThreads {
    // The pass runs suites of ObjectGraphTests only: the package is cut to that target and what it links, so that the
    // tool, the benchmarks, the samples' programs and the other test targets are not compiled a second time for it.
    let linkedByTheCoreTests: Set = [
        "PredicateFormat", "ObjectGraphMacros", "ObjectGraph", "ExampleStores", "ObjectGraphTests",
    ]
    package.targets.removeAll { !linkedByTheCoreTests.contains($0.name) }
    package.products.removeAll { !["ObjectGraph", "PredicateFormat"].contains($0.name) }
    // The macro's code runs in the compiler, never in a test process.
    for target in package.targets where target.name != "ObjectGraphMacros" {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=thread"])]
        target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(["-sanitize=thread"])]
    }
}
