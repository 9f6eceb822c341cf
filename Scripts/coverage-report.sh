#!/usr/bin/env bash
# Line coverage of Sources/MediaEvents from the profiles an instrumented run left in BIN/codecov
# (`Scripts/test.sh --coverage`): llvm-cov's per-file report, then the total as the last line.
#   Scripts/coverage-report.sh BIN
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1
# The toolchain's own llvm tools: Debian's read another profile format version.
toolchain=$(dirname "$(readlink -f "$(command -v swift)")")
profdata_tool=$toolchain/llvm-profdata
cov_tool=$toolchain/llvm-cov
[[ -x $profdata_tool ]] || profdata_tool=llvm-profdata
[[ -x $cov_tool ]] || cov_tool=llvm-cov
tests="$bin/MediaEventsPackageTests.xctest"
profdata="$bin/codecov/merged.profdata"
shopt -s nullglob
profiles=("$bin"/codecov/*.profraw)
if [[ ${#profiles[@]} -eq 0 ]]; then
    echo "coverage: no profiles in $bin/codecov (did the tests run?)" >&2
    exit 1
fi
# A test process killed by a signal writes no profile; what is left would give a figure that is
# not the suite's. Each test runs in a process of its own, so at least one profile must come from
# the test bundle (SwiftPM names them after it).
bundle_id=$(readelf -n "$tests" | awk '/Build ID/ { print $3 }')
found=0
for profile in "${profiles[@]}"; do
    if "$profdata_tool" show --binary-ids "$profile" 2>/dev/null | grep -qx "$bundle_id"; then
        found=1
        break
    fi
done
if [[ $found -ne 1 ]]; then
    echo "coverage: the test bundle wrote no profile (killed by a signal? see above): no figure" >&2
    exit 1
fi
"$profdata_tool" merge -sparse "${profiles[@]}" -o "$profdata"
"$cov_tool" report "$tests" -instr-profile "$profdata" Sources/MediaEvents
"$cov_tool" export "$tests" -instr-profile "$profdata" -summary-only Sources/MediaEvents |
    python3 -c '
import json, sys
lines = json.load(sys.stdin)["data"][0]["totals"]["lines"]
percent, covered, count = lines["percent"], lines["covered"], lines["count"]
print(f"line coverage of Sources/MediaEvents: {percent:.2f}% ({covered} of {count} lines)")
if percent < 90:
    print("coverage: below the 90 % the project keeps", file=sys.stderr)
    sys.exit(1)'
