#!/usr/bin/env bash
# Builds the DocC archives of ObjectGraph, ObjectGraphPostgres and PredicateFormat (in .build/plugins/Swift-DocC/outputs). A warning (a
# symbol link that resolves to nothing, an article no page reaches) fails the build: CI runs this from test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
for target in PredicateFormat ObjectGraph ObjectGraphPostgres; do
  swift package generate-documentation --target "$target" --warnings-as-errors
done
