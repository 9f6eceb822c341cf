#!/usr/bin/env bash
# Formats every Swift file of the package in place with the toolchain's swift-format and the
# checked-in .swift-format (the style the code was written in: 4 spaces, 120 columns).
set -euo pipefail
cd "$(dirname "$0")/.."
exec swift-format format --configuration .swift-format --in-place --parallel --recursive \
    Sources Tests Examples Benchmarks
