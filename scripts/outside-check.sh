#!/usr/bin/env bash
# Type-checks the example stores (Tests/ExampleStores) as code outside the package: against the built ObjectGraph
# module without the package's name, so a `package` symbol they use fails here although the package's own build
# accepts it. Run after a build (scripts/test.sh), with the SwiftPM options of that build in OBJECTGRAPH_SWIFT_OPTIONS
# if it had any.
set -euo pipefail
cd "$(dirname "$0")/.."
read -ra options <<< "${OBJECTGRAPH_SWIFT_OPTIONS:-}"
bin=$(swift build "${options[@]}" --show-bin-path)
grdb_sqlite=$(find "$bin/../../checkouts" -path "*/Sources/GRDBSQLite/module.modulemap" | head -n 1)
swiftc -typecheck -swift-version 6 -I "$bin/Modules" -Xcc -fmodule-map-file="$grdb_sqlite" Tests/ExampleStores/*.swift
echo "The example stores use the public API only."
