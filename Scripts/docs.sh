#!/usr/bin/env bash
# Builds the DocC catalog Sources/MediaEvents/MediaEvents.docc into .build/docs with the
# toolchain's docc, failing on any warning (a broken link, a parameter documented that does not
# exist …), then lists the public symbols that have no doc comment (informational; the count is
# the last line).
set -euo pipefail
cd "$(dirname "$0")/.."
# A scratch path of its own: the symbol-graph flags would otherwise rebuild the normal .build.
scratch=.build-docs
graphs=$scratch/symbol-graphs
output=.build/docs
rm -rf "$output"
mkdir -p "$graphs"

build() {
    swift build --scratch-path "$scratch" --target MediaEvents \
        -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs"
}
build
# The compiler writes the graph only when it compiles: a build with nothing to do after the
# graph was removed leaves none, so start that scratch path over.
if [[ ! -f $graphs/MediaEvents.symbols.json ]]; then
    rm -rf "$scratch"
    mkdir -p "$graphs"
    build
fi
mkdir -p "$(dirname "$output")"  # a fresh clone has no .build yet
docc convert Sources/MediaEvents/MediaEvents.docc \
    --additional-symbol-graph-dir "$graphs" \
    --output-path "$output" \
    --warnings-as-errors
echo "docs: built into $output with no warnings"

# One line per public declaration of this module without a `///` comment (a declaration the
# symbol graph lists under several types, such as a protocol extension's default, counts once).
python3 - "$graphs/MediaEvents.symbols.json" <<'PY'
import json, sys
symbols = json.load(open(sys.argv[1]))["symbols"]
declarations = {}
for symbol in symbols:
    location = symbol.get("location")
    if location is None:  # inherited from another module (Equatable's !=, …)
        continue
    key = (location["uri"].split("/Sources/")[-1], location["position"]["line"],
           symbol["names"]["title"])
    declarations.setdefault(key, []).append(symbol)
undocumented = sorted(key for key, found in declarations.items()
                      if not any("docComment" in symbol for symbol in found))
for path, line, _ in undocumented:
    found = declarations[(path, line, _)]
    names = sorted({".".join(symbol["pathComponents"]) for symbol in found})
    kind = found[0]["kind"]["displayName"].lower()
    print(f"undocumented: {path}:{line + 1}: {kind} {', '.join(names)}")
print(f"docs: {len(undocumented)} of {len(declarations)} public declarations have no doc comment")
PY
