#!/usr/bin/env bash
# Kills a saving process N times for each way of saving (plain, nested, deleting) and checks the store after each:
#   scripts/crash-test.sh 200
set -euo pipefail
cd "$(dirname "$0")/.."
OBJECTGRAPH_CRASH_KILLS="${1:-50}" swift test --filter CrashTests
