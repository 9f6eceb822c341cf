#!/usr/bin/env bash
# Leak check: runs the release build of MediaEventsLeakLoop (create / observe / play /
# teardown in every dispatch configuration) under valgrind memcheck and fails if any
# definitely-lost block has a MediaEvents frame in its stack. Third-party noise is
# suppressed by Scripts/leaks.supp (glibc loader, libvlc setup and plugins only).
#   Scripts/leaks.sh [iterations]
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-12}
# C debug info as DWARF 4: valgrind 3.19 (Debian 12) cannot read the DWARF 5 that the
# toolchain's clang writes for the C targets (with CLibVLCFixes' it gave up on a "possibly
# corrupted debuginfo file" before running anything).
swift build -c release --scratch-path .build-leaks -Xcc -gdwarf-4 --product MediaEventsLeakLoop
binary=.build-leaks/release/MediaEventsLeakLoop
log=$(mktemp "${TMPDIR:-/tmp}/mediaevents-leaks.XXXXXX.log")
status=0
valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
    --num-callers=60 --suppressions=Scripts/leaks.supp --log-file="$log" \
    "$binary" "$iterations" || status=$?
if ! grep -q "ERROR SUMMARY" "$log"; then
    echo "FAIL: valgrind did not get to a leak summary (exit status $status); the end of its log ($log):"
    tail -n 15 "$log"
    exit 1
fi
grep -E "definitely lost|indirectly lost|possibly lost|ERROR SUMMARY|suppressed:" "$log" | sed 's/^==[0-9]*== //'
if [[ $status -ne 0 ]]; then
    echo "FAIL: MediaEventsLeakLoop exited with status $status under valgrind (log: $log)"
    exit 1
fi
# Each leak record is a block of lines from "... are definitely lost ..." to a blank line.
ours=$(awk '/are definitely lost/ { block = $0; inblock = 1; next }
            inblock && /^==[0-9]+== *$/ { if (block ~ /MediaEvents|LeakLoop/) print block "\n"; inblock = 0; next }
            inblock { block = block "\n" $0 }' "$log")
if [[ -n $ours ]]; then
    echo "FAIL: definite leaks with MediaEvents frames (full log: $log):"
    echo "$ours"
    exit 1
fi
echo "OK: no definite leak with a MediaEvents frame (full log: $log)"
