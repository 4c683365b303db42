#!/usr/bin/env bash
# The tests, against a PostgreSQL server (scripts/with-postgres.sh): the whole suite, the documentation's samples
# compiled and run, the documentation (built with warnings as errors), then the concurrency suites again under ThreadSanitizer. A data race reported by
# ThreadSanitizer fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
# ObjectGraphPostgres's tests need a server: one is started for the run unless OBJECTGRAPH_POSTGRES_URL names one.
if [[ -z "${OBJECTGRAPH_POSTGRES_URL:-}" ]]; then
    exec bash scripts/with-postgres.sh bash scripts/test.sh "$@"
fi
# Every Swift sample of README.md and the DocC articles, as programs the build compiles (scripts/doc-samples.py).
command -v python3 > /dev/null || apt-get install -y python3
python3 scripts/doc-samples.py
swift test
swift build
bash scripts/outside-check.sh
# The samples' programs, each in a directory of its own; what the text says they print or leave is checked.
python3 scripts/doc-samples.py --run
# The libraries' public API against the last release's (API/): a break CHANGELOG.md does not list fails the run.
bash scripts/api-check.sh
# The tool with its PostgreSQL commands, which the plain build leaves out (the Postgres trait; see Package.swift).
swift build --traits Postgres --product objectgraph
bash scripts/docs.sh
concurrency_suites="StressTests|NestedContextTests|ConfinementTests|ObjectGraphTests\.StackTests|StackRecoveryTests|MergePolicyTests"
concurrency_suites+="|RegistryTests|InFlightSaveTests|FetchConsistencyTests|IDForwardingTests|ContextLifetimeTests"
concurrency_suites+="|ManyProcessTests|PersistentHistoryTests"
# Only the project's own targets are compiled with ThreadSanitizer, in .build (see Package.swift), and the core's
# suites leave PostgreSQL out: they ran on it above. The next plain build compiles the project's targets again.
OBJECTGRAPH_SANITIZE_THREADS=1 TSAN_OPTIONS="halt_on_error=1" swift test --filter "$concurrency_suites"
