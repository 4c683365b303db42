#!/usr/bin/env bash
# Builds the DocC archives of ObjectGraph, ObjectGraphPostgres and PredicateFormat (in .build/plugins/Swift-DocC/outputs,
# or the plugins folder of the build directory OBJECTGRAPH_SWIFT_OPTIONS names). A warning (a symbol link that
# resolves to nothing, an article no page reaches) fails the build: CI runs this from test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
read -ra options <<< "${OBJECTGRAPH_SWIFT_OPTIONS:-}"
# One run for the three: the plugin builds its tools once (a run per target took half again as long).
swift package "${options[@]}" generate-documentation --target PredicateFormat --target ObjectGraph \
  --target ObjectGraphPostgres --warnings-as-errors
