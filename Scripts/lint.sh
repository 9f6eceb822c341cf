#!/usr/bin/env bash
# Checks that every Swift file is formatted as Scripts/format.sh would format it and breaks none
# of the enabled rules of .swift-format; exits non-zero on any finding (--strict turns warnings
# into errors).
set -euo pipefail
cd "$(dirname "$0")/.."
exec swift-format lint --configuration .swift-format --strict --parallel --recursive \
    Sources Tests Examples Benchmarks
