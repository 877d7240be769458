#!/usr/bin/env bash
# Counts the public symbols each library product puts in front of its users.
#
# For every library product in Package.swift, the symbols of its modules at `public` access
# (`package`, internal and `@_spi` declarations excluded), as `swift symbolgraph-extract` sees
# them in the built modules, plus what those modules re-export: all of a module for
# `@_exported import M`, one declaration and its members for `@_exported import struct M.Name`.
# Members a protocol conformance only synthesizes (Equatable's `!=`, ...) are not counted; they
# are printed apart. Extensions of other modules' types (`UnsafeRawBufferPointer.equals`) are.
#
# Usage: Scripts/count-public-symbols.sh [--no-build] [--list PRODUCT]
#   --no-build      use the modules already in .build/debug (default: `swift build` first)
#   --list PRODUCT  print every symbol PRODUCT exposes, one a line, instead of the table
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
list=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    --no-build) build=0 ;;
    --list) list="$2"; shift ;;
    *) echo "usage: $0 [--no-build] [--list PRODUCT]" >&2; exit 2 ;;
  esac
  shift
done

manifest=$(mktemp)
graphs=$(mktemp -d)
trap 'rm -rf "$manifest" "$graphs"' EXIT
swift package dump-package > "$manifest"

products=$(python3 -c '
import json, sys
package = json.load(open(sys.argv[1]))
for product in package["products"]:
    if "library" in product["type"]:
        print(product["name"] + ":" + ",".join(product["targets"]))
' "$manifest")

if [ "$build" = 1 ]; then
  swift build >&2   # every non-test target; `--product` does not build automatic library products
fi

. Scripts/lib/built-modules.sh
for target in $(python3 -c '
import json, sys
for t in json.load(open(sys.argv[1]))["targets"]:
    if t["type"] == "regular": print(t["name"])
' "$manifest"); do
  [ -e "$modules/$target.swiftmodule" ] || continue
  mkdir -p "$graphs/$target"
  swift symbolgraph-extract -module-name "$target" -target "$(uname -m)-unknown-linux-gnu" \
    -I "$modules" -I Sources/CZlib "${clang_flags[@]}" -minimum-access-level public -output-dir "$graphs/$target" >&2
done

python3 - "$graphs" "$list" $products <<'PY'
import glob, json, os, re, sys

graphs, wanted, entries = sys.argv[1], sys.argv[2], sys.argv[3:]

def symbols(module):
    """Public symbols a module declares, as "dotted.path (kind) precise-id"; overloads stay apart."""
    own, synthesized = set(), set()
    for path in glob.glob(os.path.join(graphs, module, "*.symbols.json")):
        for symbol in json.load(open(path))["symbols"]:
            name = ".".join(symbol["pathComponents"])
            kind = symbol["kind"]["identifier"].removeprefix("swift.")
            precise = symbol["identifier"]["precise"]
            entry = f"{name} ({kind}) {precise}"
            (synthesized if "::SYNTHESIZED::" in precise else own).add(entry)
    return own, synthesized

def reexports(module):
    """(module, declaration or None) pairs named by `@_exported import` in a module's sources."""
    found = []
    pattern = re.compile(r"^\s*@_exported\s+import\s+(?:(?:struct|class|enum|protocol|typealias|func|var|let)\s+)?([\w.]+)")
    for path in glob.glob(f"Sources/{module}/**/*.swift", recursive=True):
        for line in open(path):
            match = pattern.match(line)
            if match:
                parts = match.group(1).split(".", 1)
                found.append((parts[0], parts[1] if len(parts) > 1 else None))
    return found

def exposed(module, seen=None):
    seen = set() if seen is None else seen
    if module in seen:
        return set(), set()
    seen.add(module)
    own, synthesized = symbols(module)
    for other, declaration in reexports(module):
        more, more_synthesized = exposed(other, seen) if declaration is None else symbols(other)
        if declaration is not None:
            keep = lambda entry: entry.split(" ")[0] == declaration or entry.startswith(declaration + ".")
            more = {e for e in more if keep(e)}
            more_synthesized = {e for e in more_synthesized if keep(e)}
        own |= more
        synthesized |= more_synthesized
    return own, synthesized

rows = []
for entry in entries:
    product, targets = entry.split(":")
    own, synthesized, types = set(), set(), set()
    for target in targets.split(","):
        mine, synth = exposed(target)
        own |= mine
        synthesized |= synth
    if wanted == product:
        print("\n".join(sorted(" ".join(e.split(" ")[:2]) for e in own)))
        sys.exit(0)
    types = {e for e in own if "." not in e.split(" ")[0]}
    rows.append((product, len(own), len(types), len(synthesized)))

if wanted:
    sys.exit(f"no library product named {wanted}")
print(f"{'product':<30} {'public symbols':>14} {'top-level':>10} {'synthesized':>12}")
for product, count, types, synth in rows:
    print(f"{product:<30} {count:>14} {types:>10} {synth:>12}")
PY
