#!/usr/bin/env bash
# Fails when a Swift file outside Sources/MediaEvents/Native/ calls a libvlc function: every
# libvlc call of the package goes through that one layer, whose members say which send sites
# each call triggers, which locks it takes and on which queue it must run (Native/Native.swift).
# The C targets (Sources/CLibVLC*, Benchmarks/CRawBaseline, Tests/CVLCTestSupport) are C, not
# scanned. Comments are left out; a type or constant (`libvlc_event_t`, `libvlc_MediaFreed`) is
# no call. Prints each offending line as file:line: text.
set -euo pipefail
cd "$(dirname "$0")/.."

offending=$(
    find Sources Tests Benchmarks Examples -name '*.swift' -not -path 'Sources/MediaEvents/Native/*' -print0 |
        sort -z |
        xargs -0 awk '
            FNR == 1 { in_block = 0 }
            {
                line = $0
                # Block comments, then line comments (a "//" inside a string is rare enough here).
                if (in_block) {
                    if (index(line, "*/") == 0) next
                    line = substr(line, index(line, "*/") + 2)
                    in_block = 0
                }
                while (match(line, /\/\*/)) {
                    rest = substr(line, RSTART + 2)
                    if (index(rest, "*/") == 0) { line = substr(line, 1, RSTART - 1); in_block = 1; break }
                    line = substr(line, 1, RSTART - 1) substr(rest, index(rest, "*/") + 2)
                }
                sub(/\/\/.*/, "", line)
                # A call: libvlc_name( where the name is not a type (…_t) or a callback type (…_cb).
                text = line
                while (match(text, /libvlc_[A-Za-z0-9_]+[ \t]*\(/)) {
                    name = substr(text, RSTART, RLENGTH)
                    sub(/[ \t]*\($/, "", name)
                    if (name !~ /_t$/ && name !~ /_cb$/) {
                        printf "%s:%d: %s\n", FILENAME, FNR, $0
                        break
                    }
                    text = substr(text, RSTART + RLENGTH)
                }
            }'
)

if [[ -n $offending ]]; then
    echo "check-native-layer: libvlc called outside Sources/MediaEvents/Native/ (add a member to the Native type of that object and call it):" >&2
    echo "$offending" >&2
    exit 1
fi
echo "check-native-layer: no libvlc call outside Sources/MediaEvents/Native/"
