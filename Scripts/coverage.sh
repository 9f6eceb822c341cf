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
bin=$(swift build --show-bin-path --scratch-path "$scratch")
tests="$bin/MediaEventsPackageTests.xctest"
rm -rf "$bin/codecov"  # only this run's profiles

status=0
swift test --skip-build --enable-code-coverage --scratch-path "$scratch" "$@" || status=$?

# Merged here rather than taken from `swift test`, which merges only when every test passed.
profdata="$bin/codecov/merged.profdata"
shopt -s nullglob
profiles=("$bin"/codecov/*.profraw)
if [[ ${#profiles[@]} -eq 0 ]]; then
    echo "coverage: no profiles in $bin/codecov (did the tests run?)" >&2
    exit 1
fi
# A test bundle killed by a signal writes no profile, and what is left (the example programs that
# ExamplesTests ran, the bundle's empty Swift Testing pass) would give a figure that is not the
# suite's: look for the bundle's build ID in a profile of its XCTest pass (SwiftPM's file names).
bundle_id=$(readelf -n "$tests" | awk '/Build ID/ { print $3 }')
found=0
for profile in "$bin"/codecov/XCTest*.profraw; do
    if llvm-profdata show --binary-ids "$profile" 2>/dev/null | grep -qx "$bundle_id"; then
        found=1
        break
    fi
done
if [[ $found -ne 1 ]]; then
    echo "coverage: the test bundle wrote no profile (killed by a signal? see above): no figure" >&2
    exit 1
fi
llvm-profdata merge -sparse "${profiles[@]}" -o "$profdata"
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
