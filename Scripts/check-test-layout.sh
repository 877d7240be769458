#!/usr/bin/env bash
# The tests' layout (issue 26): every library target has a test target of its own; the light test
# support (Tests/Support) reaches neither the collector nor Hummingbird, SwiftNIO or swift-crypto,
# and only the collector, upload and CLI tests depend on the collector's support; children are
# started through the one runner (Tests/Support: ChildProcess, run/runOffPool), never a raw Process().
set -euo pipefail
cd "$(dirname "$0")/.."
swift package dump-package > "${TMPDIR:-/tmp}/apitrace-package.json"
python3 - "${TMPDIR:-/tmp}/apitrace-package.json" <<'PY'
import json, sys
package = json.load(open(sys.argv[1]))
targets = {t["name"]: t for t in package["targets"]}
def deps(target):
    out = []
    for d in target.get("dependencies", []):
        for kind in ("byName", "target", "product"):
            if kind in d:
                out.append((kind, d[kind][0] if kind != "product" else d[kind][0], d[kind][1] if kind == "product" else None))
    return out
def closure(name, seen=None):
    seen = set() if seen is None else seen
    products = set()
    for kind, dep, pkg in deps(targets[name]):
        if kind == "product":
            products.add(f"{pkg}:{dep}")
        elif dep in targets and dep not in seen:
            seen.add(dep)
            products |= closure(dep, seen)[1]
    return seen, products
problems = []
libraries = [t["name"] for t in package["targets"] if t["type"] == "regular" and t["name"].startswith("APITrace") and not t["name"].endswith("TestSupport")]
for lib in libraries:
    if lib + "Tests" not in targets or targets[lib + "Tests"]["type"] != "test":
        problems.append(f"library {lib} has no test target {lib}Tests")
light, products = closure("APITraceTestSupport")
heavy = {"APITraceCollector", "APITraceServerTestSupport", "APITraceCollectorTestSupport"} & light
heavy |= {p for p in products if p.split(":")[0] in ("hummingbird", "swift-nio", "swift-crypto", "swift-nio-extras")}
if heavy:
    problems.append(f"APITraceTestSupport reaches {sorted(heavy)}")
allowed = {"APITraceCollectorTests", "APITraceUploadTests", "APITraceCLITests"}
for t in package["targets"]:
    if t["type"] == "test" and any(dep == "APITraceCollectorTestSupport" for _, dep, _ in deps(t)) and t["name"] not in allowed:
        problems.append(f"{t['name']} depends on APITraceCollectorTestSupport")
for p in problems:
    print("check-test-layout:", p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
raw=$(grep -rln --include='*.swift' 'Process()' Tests | grep -v '^Tests/Support/' || true)
if [ -n "$raw" ]; then
  echo "check-test-layout: a raw Process() outside Tests/Support (use ChildProcess or runOffPool): $raw" >&2
  exit 1
fi
echo "check-test-layout: ok"
