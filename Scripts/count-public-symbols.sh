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
# Members a product adds to types of other packages (the standard library's `Dictionary`,
# Foundation's `URL`, ...) are listed under the table: they land on every such value of an app that
# links the product, so `--check` fails when there is any. A member of an extension constrained to
# one of our types (`extension Sequence where Element == TraceEvent`) lands only on values of our
# types and is not listed.
#
# Usage: Scripts/count-public-symbols.sh [--no-build] [--check] [--list PRODUCT]
#   --no-build      use the modules already in .build/debug (default: `swift build` first)
#   --check         exit 1 when a product adds public members to another package's types
#   --list PRODUCT  print every symbol PRODUCT exposes, one a line, instead of the table
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
list=""
check=0
while [ "$#" -gt 0 ]; do
  case "$1" in
    --no-build) build=0 ;;
    --check) check=1 ;;
    --list) list="$2"; shift ;;
    *) echo "usage: $0 [--no-build] [--check] [--list PRODUCT]" >&2; exit 2 ;;
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

ours=$(python3 -c '
import json, sys
print(",".join(t["name"] for t in json.load(open(sys.argv[1]))["targets"]))
' "$manifest")

python3 - "$graphs" "$list" "$check" "$ours" $products <<'PY'
import glob, json, os, re, sys

graphs, wanted, check, ours, entries = sys.argv[1], sys.argv[2], sys.argv[3] == "1", set(sys.argv[4].split(",")), sys.argv[5:]

def foreign(module):
    """Public members `module` adds to types declared outside this package, as "Type.member (kind)"."""
    found = set()
    for path in glob.glob(os.path.join(graphs, module, f"{module}@*.symbols.json")):
        extended = os.path.basename(path)[len(module) + 1:].removesuffix(".symbols.json")
        if extended in ours:
            continue
        for symbol in json.load(open(path))["symbols"]:
            if constrained_to_ours(symbol):
                continue
            found.add(f"{'.'.join(symbol['pathComponents'])} ({symbol['kind']['identifier'].removeprefix('swift.')}) in {extended}")
    return found

def constrained_to_ours(symbol):
    """True for a member of an extension constrained to one of this package's types
    (`extension Sequence where Element == TraceEvent`): it lands only on values of our types."""
    for constraint in symbol.get("swiftExtension", {}).get("constraints", []):
        match = re.match(r"s:(\d+)", constraint.get("rhsPrecise", ""))
        if match:
            length, start = int(match.group(1)), match.end()
            if constraint["rhsPrecise"][start:start + length] in ours:
                return True
    return False

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
added = []
for entry in entries:
    product, targets = entry.split(":")
    own, synthesized, types = set(), set(), set()
    for target in targets.split(","):
        mine, synth = exposed(target)
        own |= mine
        synthesized |= synth
        added += [f"{product}: {member}" for member in sorted(foreign(target))]
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
print("members added to other packages' types: " + ("none" if not added else f"{len(added)}"))
for line in added:
    print("  " + line)
if check and added:
    sys.exit("count-public-symbols: a product adds public members to another package's types (every such value in an app gains them)")
PY
