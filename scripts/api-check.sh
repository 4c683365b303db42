#!/usr/bin/env bash
# The public API of the library products (ObjectGraph, PredicateFormat, ObjectGraphPostgres) against the last
# release's, which API/ records (swift-api-digester's dump of each module, gzipped, made by `--record` when a release
# is cut).
# A break (a declaration removed, renamed, or changed in a way that breaks callers) fails the run unless CHANGELOG.md's
# "Unreleased" section has a "### Breaking" heading saying what breaks: a 0.x minor release may break, never silently.
#
# Reads the modules of the debug build (run after `swift build` or `swift test`, with that build's SwiftPM options in
# OBJECTGRAPH_SWIFT_OPTIONS if it had any); no second build of the baseline, which
# `swift package diagnose-api-breaking-changes` would make (twice the dependencies' build time in CI).
#
#   bash scripts/api-check.sh            compare with API/
#   bash scripts/api-check.sh --record   record the current API as the release's, in API/
set -euo pipefail
cd "$(dirname "$0")/.."
modules=(ObjectGraph PredicateFormat ObjectGraphPostgres)
read -ra options <<< "${OBJECTGRAPH_SWIFT_OPTIONS:-}"
bin=$(swift build "${options[@]}" --show-bin-path)
checkouts=$(cd "$bin/../.." && pwd)/checkouts
# The C modules the Swift modules import (SQLite's, SwiftNIO's and their shims), as SwiftPM names them to the compiler.
flags=(-I "$bin/Modules")
while IFS= read -r map; do
    flags+=(-Xcc "-fmodule-map-file=$map")
done < <(
    find "$checkouts" -name module.modulemap | grep -v -e '/Benchmarks/' -e GRDBSQLCipher -e SQLiteCustom -e 'GRDB.swift/Support'
    find "$bin" -maxdepth 2 -name module.modulemap | grep -v -e '-tool.build'
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ "${1:-}" == "--record" ]]; then
    mkdir -p API
    for module in "${modules[@]}"; do
        swift-api-digester -dump-sdk -module "$module" "${flags[@]}" -o "$work/$module.json"
        # Without the dump's record of its own command line (this machine's paths): the same API, the same file.
        python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["ABIRoot"].pop("tool_arguments", None); print(json.dumps(d, indent=1, sort_keys=True))' \
            "$work/$module.json" | gzip -9 -n > "API/$module.json.gz"
    done
    echo "api-check: recorded the API of ${modules[*]} in API/"
    exit 0
fi

release=$(sed -n 's/^## \([0-9][0-9.]*\)$/\1/p' CHANGELOG.md | head -n 1)
breaks=""
for module in "${modules[@]}"; do
    if [[ ! -f "API/$module.json.gz" ]]; then
        echo "api-check: API/$module.json.gz is missing: record the release's API with --record" >&2
        exit 1
    fi
    gzip -d -c "API/$module.json.gz" > "$work/$module.json"
    # The report lists its findings under /* headings */; any other line is a break.
    report=$(swift-api-digester -diagnose-sdk -baseline-path "$work/$module.json" -module "$module" "${flags[@]}" 2>&1)
    found=$(grep -v -e '^$' -e '^/\*' <<< "$report" || true)
    [[ -n "$found" ]] && breaks+="$module: ${found//$'\n'/$'\n'$module: }"$'\n'
done
if [[ -z "$breaks" ]]; then
    echo "api-check: no breaking change to ${modules[*]} since $release"
    exit 0
fi
printf '%s' "$breaks"
count=$(grep -c . <<< "$breaks")
unreleased=$(awk '/^## Unreleased/ { on = 1; next } /^## / { on = 0 } on' CHANGELOG.md)
if grep -q '^### Breaking' <<< "$unreleased"; then
    echo "api-check: $count breaking changes since $release, which CHANGELOG.md lists under Breaking"
    exit 0
fi
echo "api-check: $count breaking changes since $release (above), and CHANGELOG.md's Unreleased section has no" \
    "'### Breaking' heading saying what breaks" >&2
exit 1
