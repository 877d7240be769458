#!/usr/bin/env bash
# An app that depends on apitrace for its client libraries fetches only what those need.
#
# Makes throwaway consumer packages next to nothing (in a temporary folder) that depend on this
# checkout by path, resolves them, and checks the packages SwiftPM fetched:
#   - APITraceCapture + APITraceSSE + APITraceTesting with `traits: []`: swift-log alone; and the
#     README's first client (the block after `<!-- first-client`) builds there as its main.swift;
#   - APITraceUpload with `traits: ["Upload"]`: swift-log and swift-crypto (with its swift-asn1);
#   - the default traits: every dependency of the package, for comparison (printed, not checked).
# Run by .ci/run. Usage: Scripts/check-light-consumer.sh [--no-build]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
identity=$(basename "$root" | tr 'A-Z' 'a-z')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build=1
[ "${1:-}" = "--no-build" ] && build=0

# consumer NAME TRAITS PRODUCTS... : writes a consumer package importing each product.
consumer() {
  local name=$1 traits=$2; shift 2
  local dir="$work/$name" deps="" imports=""
  mkdir -p "$dir/Sources/App"
  for product in "$@"; do
    deps+=".product(name: \"$product\", package: \"$identity\"), "
    imports+="import $product"$'\n'
  done
  cat > "$dir/Package.swift" <<EOF
// swift-tools-version: 6.1
import PackageDescription
let package = Package(
    name: "App",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [.package(path: "$root"$traits)],
    targets: [.executableTarget(name: "App", dependencies: [$deps])]
)
EOF
  printf '%s\nprint("linked")\n' "$imports" > "$dir/Sources/App/main.swift"
  echo "$dir"
}

# fetched DIR: the packages SwiftPM checked out for the consumer in DIR, one per line, sorted.
fetched() {
  (cd "$1" && swift package resolve >/dev/null 2>"$1/resolve.log") || { cat "$1/resolve.log" >&2; return 1; }
  ls "$1/.build/checkouts" 2>/dev/null | sort
}

status=0
expect() {
  local what=$1 want=$2 got=$3
  if [ "$got" = "$want" ]; then
    echo "ok: $what fetches: $(echo $got | tr '\n' ' ')"
  else
    echo "FAIL: $what fetches: $(echo $got | tr '\n' ' ') (expected: $(echo $want | tr '\n' ' '))" >&2
    status=1
  fi
}

light=$(consumer light ", traits: []" APITraceCapture APITraceSSE APITraceTesting)
expect "a capture-only app (APITraceCapture, APITraceSSE, APITraceTesting; traits: [])" "swift-log" "$(fetched "$light")"

upload=$(consumer upload ", traits: [\"Upload\"]" APITraceCapture APITraceUpload)
expect "an app with the uploader (traits: [\"Upload\"])" "$(printf 'swift-asn1\nswift-crypto\nswift-log')" "$(fetched "$upload")"

all=$(consumer everything "" APITraceCapture)
count=$(fetched "$all" | wc -l)
echo "for comparison, with the default traits: $count packages ($(du -sh "$all/.build/checkouts" | cut -f1))"

if [ "$build" = 1 ] && [ "$status" = 0 ]; then
  # The README's first client, exactly as printed there.
  awk '/<!-- first-client/ {found=1; next} found && /^```swift/ {inside=1; next} inside && /^```/ {exit} inside {print}' \
    "$root/README.md" > "$light/Sources/App/main.swift"
  [ -s "$light/Sources/App/main.swift" ] || { echo "FAIL: no first-client block in README.md" >&2; exit 1; }
  # The DocC catalog shows the same client: it must be the README's block, line for line.
  docc_client="$root/Sources/APITraceCapture/APITraceCapture.docc/YourFirstClient.md"
  if ! diff <(awk '/<!-- first-client/ {found=1; next} found && /^```swift/ {inside=1; next} inside && /^```/ {exit} inside {print}' "$docc_client") \
      "$light/Sources/App/main.swift" >&2; then
    echo "FAIL: the first client in $docc_client differs from the README's" >&2
    status=1
  fi
  if (cd "$light" && swift build >"$light/build.log" 2>&1); then
    echo "ok: the README's first client builds against the light graph"
  else
    grep -E "error|warning" "$light/build.log" | head -20 >&2
    echo "FAIL: the README's first client does not build" >&2
    status=1
  fi
  if grep -q "warning:" "$light/build.log" && grep "warning:" "$light/build.log" | grep -q "Sources/App/"; then
    grep "warning:" "$light/build.log" | grep "Sources/App/" >&2
    echo "FAIL: the README's first client builds with warnings" >&2
    status=1
  fi
fi
exit $status
