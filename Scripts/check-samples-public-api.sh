#!/usr/bin/env bash
# Fails when a client sample uses more than apitrace's public API.
#
# The samples are targets of this package, so the compiler lets them see `package` declarations;
# a user's app cannot. This type-checks each client sample as code outside the package would be
# (no `-package-name`) against the built modules, so a sample that leans on a `package` symbol fails.
#
# Usage: Scripts/check-samples-public-api.sh   (after `swift build`)
set -euo pipefail
cd "$(dirname "$0")/.."

[ -d .build/debug ] || { echo "check-samples-public-api: build first (swift build)" >&2; exit 2; }
. Scripts/lib/built-modules.sh

status=0
for sample in NewsClient NewsFutureClient NewsServerSideClient; do
  if ! swiftc -typecheck -module-name "Check$sample" -I "$modules" -I Sources/CZlib "${clang_flags[@]}" \
      -enable-upcoming-feature MemberImportVisibility -enable-upcoming-feature ExistentialAny \
      -enable-upcoming-feature InternalImportsByDefault \
      Samples/"$sample"/*.swift; then
    echo "check-samples-public-api: Samples/$sample uses more than the public API" >&2
    status=1
  fi
done
[ "$status" = 0 ] && echo "check-samples-public-api: the client samples use only public API"
exit "$status"
