#!/usr/bin/env bash
# The whole suite: a build with warnings as errors, then every test in a process of its own,
# several at once (`swift test --parallel`). Most tests wait for libvlc (the re-entrancy matrix
# uses about a tenth of its time on a CPU), so more workers than cores finish sooner; one test
# per process also means no test inherits another's threads.
#
#   Scripts/test.sh                       # what `make test` runs
#   Scripts/test.sh --coverage            # instrumented; its last line is the line coverage
#                                         #   of Sources/MediaEvents
#   Scripts/test.sh --sanitize thread     # ThreadSanitizer (halt_on_error), own scratch path
#   Scripts/test.sh --sanitize address    # AddressSanitizer (detect_leaks=0), own scratch path
#   Scripts/test.sh -- --filter PlaybackTests   # what follows -- goes to `swift test`
#
# MEDIAEVENTS_TEST_WORKERS sets the number of test processes at once (default 4). The slowest
# tests and the run's time are printed at the end, from the xUnit report (kept where
# MEDIAEVENTS_TEST_REPORT says, else in a temporary file).
set -euo pipefail
cd "$(dirname "$0")/.."

coverage=0
sanitizer=""
passthrough=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --coverage) coverage=1 ;;
        --sanitize) sanitizer=$2; shift ;;
        --) shift; passthrough=("$@"); break ;;
        *) echo "Scripts/test.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

workers=${MEDIAEVENTS_TEST_WORKERS:-4}
scratch=.build
flags=()
case $sanitizer in
    "") ;;
    thread)
        scratch=.build-tsan
        flags+=(--sanitize=thread)
        # halt_on_error: the first race fails the run instead of scrolling past.
        export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
        ;;
    address)
        scratch=.build-asan
        flags+=(--sanitize=address)
        # Leak reports at exit include the XCTest runner's and libvlc plugins' allocations and
        # alone make the run fail; this pass is about memory errors (Scripts/leaks.sh checks
        # leaks).
        export ASAN_OPTIONS="detect_leaks=0 ${ASAN_OPTIONS:-}"
        ;;
    *) echo "Scripts/test.sh: --sanitize takes thread or address" >&2; exit 2 ;;
esac
if [[ $coverage == 1 ]]; then
    flags+=(--enable-code-coverage)
fi
flags+=(--scratch-path "$scratch")

swift build --build-tests -Xswiftc -warnings-as-errors "${flags[@]}"
bin=$(swift build --show-bin-path "${flags[@]}")
rm -rf "$bin/codecov"  # only this run's profiles

report=${MEDIAEVENTS_TEST_REPORT:-$(mktemp "${TMPDIR:-/tmp}/mediaevents-tests.XXXXXX.xml")}
started=$SECONDS
status=0
swift test --skip-build --parallel --num-workers "$workers" --xunit-output "$report" "${flags[@]}" \
    ${passthrough[@]+"${passthrough[@]}"} || status=$?

# The slowest tests, how many ran and failed: the figures to watch as the suite grows.
python3 - "$report" "$((SECONDS - started))" "$workers" <<'PY' || true
import sys, xml.etree.ElementTree as ET
path, seconds, workers = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    cases = list(ET.parse(path).iter("testcase"))
except (OSError, ET.ParseError):
    sys.exit(0)
failed = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
timed = sorted(((float(c.get("time", 0)), f'{c.get("classname")}.{c.get("name")}') for c in cases), reverse=True)
print(f"tests: {len(cases)} run, {len(failed)} failed, in {seconds} s with {workers} workers "
      f"({sum(t for t, _ in timed):.0f} s of test time)")
for t, name in timed[:8]:
    print(f"  {t:6.1f} s  {name}")
for c in failed:
    print(f"  FAILED: {c.get('classname')}.{c.get('name')}")
PY

if [[ $coverage == 1 ]]; then
    bash Scripts/coverage-report.sh "$bin" || status=1
fi
exit $status
