#!/usr/bin/env bash
# Builds the DocC catalogs (Sources/*/*.docc) against the built modules' public symbol graphs and
# fails on any warning: a link to a symbol that is gone, renamed or no longer public.
# Needs a debug build (`swift build` or `swift test` first) and the toolchain's `docc`.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v docc >/dev/null || { echo "check-docc: docc is not installed; skipped" >&2; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. Scripts/lib/built-modules.sh
status=0
for catalog in Sources/*/*.docc; do
  target=$(basename "$(dirname "$catalog")")
  mkdir -p "$work/graphs/$target"
  swift symbolgraph-extract -module-name "$target" -target "$(uname -m)-unknown-linux-gnu" \
    -I "$modules" -I Sources/CZlib "${clang_flags[@]}" -minimum-access-level public \
    -output-dir "$work/graphs/$target" >&2
  if docc convert "$catalog" --additional-symbol-graph-dir "$work/graphs/$target" --output-dir "$work/$target.doccarchive" \
      --fallback-display-name "$target" --fallback-bundle-identifier "org.apitrace.$target" 2>&1 | grep -E "warning|error" >"$work/out"; then
    echo "check-docc: $target:" >&2
    cat "$work/out" >&2
    status=1
  fi
done
[ "$status" = 0 ] && echo "check-docc: ok ($(ls -d Sources/*/*.docc | wc -l) catalogs)"
exit "$status"
