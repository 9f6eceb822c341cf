#!/usr/bin/env bash
# Line coverage of Sources/MediaEvents by the whole test suite: an instrumented build in its own
# scratch path (so it does not clobber the normal .build), the suite, then llvm-cov's per-file
# report; the last line printed is the total line coverage.
#   Scripts/coverage.sh                          # whole suite
#   Scripts/coverage.sh --filter PlaybackTests   # extra arguments go to `swift test`
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-coverage

# ExamplesTests run the built programs, which `swift test` alone does not build.
swift build --build-tests --enable-code-coverage --scratch-path "$scratch"
status=0
swift test --skip-build --enable-code-coverage --scratch-path "$scratch" "$@" || status=$?

bin=$(swift build --show-bin-path --scratch-path "$scratch")
profdata="$bin/codecov/default.profdata"
tests="$bin/MediaEventsPackageTests.xctest"
if [[ ! -f $profdata ]]; then
    echo "coverage: no profile data at $profdata (did the tests run?)" >&2
    exit 1
fi
llvm-cov report "$tests" -instr-profile "$profdata" Sources/MediaEvents
llvm-cov export "$tests" -instr-profile "$profdata" -summary-only Sources/MediaEvents |
    python3 -c '
import json, sys
lines = json.load(sys.stdin)["data"][0]["totals"]["lines"]
percent, covered, count = lines["percent"], lines["covered"], lines["count"]
print(f"line coverage of Sources/MediaEvents: {percent:.2f}% ({covered} of {count} lines)")'
if [[ $status -ne 0 ]]; then
    echo "coverage: the tests failed (status $status); the figure above covers what ran" >&2
fi
exit $status
