#!/usr/bin/env bash
# The tests, against a PostgreSQL server (scripts/with-postgres.sh): the whole suite, the documentation's samples
# compiled and run, the documentation (built with warnings as errors), then the concurrency suites again under
# ThreadSanitizer. A data race reported by ThreadSanitizer fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
# ObjectGraphPostgres's tests need a server: one is started for the run unless OBJECTGRAPH_POSTGRES_URL names one.
if [[ -z "${OBJECTGRAPH_POSTGRES_URL:-}" ]]; then
    exec bash scripts/with-postgres.sh bash scripts/test.sh "$@"
fi
# Every build of the run, here and in the scripts it calls, takes these SwiftPM options: a build directory of its
# own, so that the run never recompiles what a developer's `swift build` left in .build (a change of options
# recompiles every module, dependencies included); no debug information, which is a fifth of the compilers' time
# (a failure still names its test, file and line, a crash or a race its functions); and the tool's PostgreSQL
# commands (the Postgres trait), built once with everything else rather than by a second build of the package.
export OBJECTGRAPH_SWIFT_OPTIONS="${OBJECTGRAPH_SWIFT_OPTIONS-"--scratch-path .build-tests -debug-info-format none --traits Postgres"}"
read -ra options <<< "$OBJECTGRAPH_SWIFT_OPTIONS"
# Every Swift sample of README.md and the DocC articles, as programs the build compiles (scripts/doc-samples.py).
command -v python3 > /dev/null || apt-get install -y python3
python3 scripts/doc-samples.py
swift test "${options[@]}"
# The samples' programs and the tool (with its PostgreSQL commands), which `swift test` built: a check that it did.
swift build "${options[@]}"
bash scripts/outside-check.sh
# The samples' programs, each in a directory of its own; what the text says they print or leave is checked.
python3 scripts/doc-samples.py --run
# The libraries' public API against the last release's (API/): a break CHANGELOG.md does not list fails the run.
bash scripts/api-check.sh
bash scripts/docs.sh
concurrency_suites="StressTests|NestedContextTests|ConfinementTests|ObjectGraphTests\.StackTests|StackRecoveryTests|MergePolicyTests"
concurrency_suites+="|RegistryTests|InFlightSaveTests|FetchConsistencyTests|IDForwardingTests|ContextLifetimeTests"
concurrency_suites+="|ManyProcessTests|PersistentHistoryTests"
# Only the project's own targets are compiled with ThreadSanitizer, in the same build directory (see Package.swift),
# and only those the concurrency suites need; the core's suites leave PostgreSQL out: they ran on it above.
OBJECTGRAPH_SANITIZE_THREADS=1 TSAN_OPTIONS="halt_on_error=1" swift test "${options[@]}" --filter "$concurrency_suites"
