#!/usr/bin/env bash
# Runs the concurrency tests under ThreadSanitizer and the whole suite under AddressSanitizer.
# Each sanitizer builds into its own scratch path so it does not clobber the normal .build.
#   Scripts/sanitizers.sh            # both
#   Scripts/sanitizers.sh thread     # TSan only
#   Scripts/sanitizers.sh address    # ASan only
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
status=0

if [[ $which == all || $which == thread ]]; then
    echo "== ThreadSanitizer: StressTests|SubscriptionTests|EventsHandlerTests|ReentrancyTests|ConfigurationTests|EventStream|SharedQueueOrderTests|VLCMediaListTests|VLCMediaListPlayerTests"
    # halt_on_error: the first race fails the run instead of scrolling past.
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
        swift test --scratch-path .build-tsan --sanitize=thread \
        --filter 'StressTests|SubscriptionTests|EventsHandlerTests|ReentrancyTests|ConfigurationTests|EventStream|SharedQueueOrderTests|VLCMediaListTests|VLCMediaListPlayerTests' || status=1
fi

if [[ $which == all || $which == address ]]; then
    echo "== AddressSanitizer: whole suite (leaks are checked by Scripts/leaks.sh)"
    # Leak reports at exit include the XCTest runner's and libvlc plugins' allocations and
    # alone make the run fail; this pass is about memory errors.
    ASAN_OPTIONS="detect_leaks=0 ${ASAN_OPTIONS:-}" \
        swift test --scratch-path .build-asan --sanitize=address || status=1
fi
exit $status
