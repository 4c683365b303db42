#!/usr/bin/env bash
# The tests, against a PostgreSQL server (scripts/with-postgres.sh): the whole suite, the documentation (built with
# warnings as errors), then the concurrency suites again under ThreadSanitizer (a build of its own in .build-tsan, so the two builds never overwrite each other). A data race
# reported by ThreadSanitizer fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
# ObjectGraphPostgres's tests need a server: one is started for the run unless OBJECTGRAPH_POSTGRES_URL names one.
if [[ -z "${OBJECTGRAPH_POSTGRES_URL:-}" ]]; then
    exec bash scripts/with-postgres.sh bash scripts/test.sh "$@"
fi
swift test
bash scripts/docs.sh
concurrency_suites="StressTests|NestedContextTests|ConfinementTests|StackTests|StackRecoveryTests|MergePolicyTests"
concurrency_suites+="|RegistryTests|InFlightSaveTests|FetchConsistencyTests|IDForwardingTests|ContextLifetimeTests"
concurrency_suites+="|ManyProcessTests|PersistentHistoryTests"
# The PostgreSQL product stays out of this build (see Package.swift): its suites ran above.
OBJECTGRAPH_WITHOUT_POSTGRES=1 TSAN_OPTIONS="halt_on_error=1" swift test --scratch-path .build-tsan --sanitize=thread --filter "$concurrency_suites"
