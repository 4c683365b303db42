// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "ObjectGraph",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "ObjectGraph", targets: ["ObjectGraph"]),
        .library(name: "PredicateFormat", targets: ["PredicateFormat"]),
        .executable(name: "objectgraph", targets: ["objectgraph"]),
        .library(name: "ObjectGraphBenchmarks", targets: ["ObjectGraphBenchmarks"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .target(name: "PredicateFormat", dependencies: [.product(name: "GRDB", package: "GRDB.swift")]),
        .macro(
            name: "ObjectGraphMacros",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        .target(
            name: "ObjectGraph",
            dependencies: [
                "PredicateFormat",
                "ObjectGraphMacros",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(
            name: "ObjectGraphBenchmarks",
            dependencies: ["ObjectGraph", "CSQLite", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(name: "ObjectGraphBenchmarksTests", dependencies: ["ObjectGraphBenchmarks"]),
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
            dependencies: ["ObjectGraph", .product(name: "GRDB", package: "GRDB.swift")],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "ObjectGraphMacrosTests",
            dependencies: [
                "ObjectGraphMacros",
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
