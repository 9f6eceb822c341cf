#!/usr/bin/env bash
# Hunts timing flakes under the conditions CI meets: runs the whole suite N times, plain and
# under ThreadSanitizer, while a CPU hog keeps both cores busy, then prints each test that
# failed with the number of runs it failed in and its first failure message. Exits non-zero
# when any test failed. A flake is fixed at its cause (Reliability's "Timing in the tests"),
# never by a retry or a longer sleep.
#   Scripts/flake-hunt.sh [N]          # N rounds (default 5), each plain then TSan
#   MEDIAEVENTS_HUNT_MODES=plain Scripts/flake-hunt.sh 10   # only one of the two
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
modes=${MEDIAEVENTS_HUNT_MODES:-plain thread}
work=$(mktemp -d "${TMPDIR:-/tmp}/mediaevents-flake-hunt.XXXXXX")

# One busy loop per core, at the tests' own priority: the machine CI runs on is shared.
hogs=()
for _ in $(seq "$(nproc)"); do
    bash -c 'while :; do :; done' &
    hogs+=($!)
done
stop_hogs() { kill "${hogs[@]}" 2>/dev/null || true; }
trap stop_hogs EXIT

for round in $(seq "$rounds"); do
    for mode in $modes; do
        args=()
        [[ $mode == plain ]] || args=(--sanitize "$mode")
        started=$SECONDS
        status=0
        MEDIAEVENTS_TEST_REPORT="$work/$mode-$round.xml" bash Scripts/test.sh ${args[@]+"${args[@]}"} \
            >"$work/$mode-$round.log" 2>&1 || status=$?
        echo "round $round, $mode: status $status in $((SECONDS - started)) s ($(grep -m1 '^tests:' "$work/$mode-$round.log" || echo 'no summary'))"
    done
done

python3 - "$work" <<'PY'
import glob, os, re, sys, xml.etree.ElementTree as ET
work = sys.argv[1]
failures = {}   # test -> [(run, message)]
runs = sorted(glob.glob(os.path.join(work, "*.log")))
for log in runs:
    run = os.path.basename(log)[:-4]
    found = set()
    try:
        for case in ET.parse(log[:-4] + ".xml").iter("testcase"):
            for tag in ("failure", "error"):
                element = case.find(tag)
                if element is not None:
                    name = f'{case.get("classname")}.{case.get("name")}'
                    message = (element.get("message") or element.text or "").strip()
                    failures.setdefault(name, []).append((run, message))
                    found.add(name)
    except (OSError, ET.ParseError):
        pass
    # A test process that crashed or was killed: SwiftPM names it in its own error line.
    text = open(log, errors="replace").read()
    for match in re.finditer(r"error: Process '\S+ (\S+)' exited with (.*)", text):
        name = match.group(1).replace("/", ".")
        if name not in found:
            failures.setdefault(name, []).append((run, match.group(2)))
            found.add(name)
    if not os.path.exists(log[:-4] + ".xml") and "tests:" not in text:
        failures.setdefault("(the run itself)", []).append((run, text.strip().splitlines()[-1:] or ["no output"]))
print(f"flake hunt: {len(runs)} runs, logs in {work}")
if not failures:
    print("flake hunt: no test failed")
    sys.exit(0)
for name, seen in sorted(failures.items(), key=lambda item: -len(item[1])):
    run, message = seen[0]
    print(f"FLAKY {name}: failed in {len(seen)} of {len(runs)} runs; first ({run}): {str(message)[:400]}")
sys.exit(1)
PY
