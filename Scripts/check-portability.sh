#!/usr/bin/env bash
# Fails when a Linux-only (or Darwin-only) API appears outside a platform condition.
#
# This machine builds for Linux only, so nothing else would notice `stat.st_mtim` (Linux;
# Darwin spells it `st_mtimespec`), `import Glibc` or `FoundationNetworking` breaking the Apple
# builds. A use is accepted inside any `#if` / `#elseif` / `#else` branch whose condition names a
# platform (`os(...)`, `canImport(...)`), at any depth.
#
# Usage: Scripts/check-portability.sh [DIR_OR_FILE...]   (default: Sources Samples)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -eq 0 ]; then
  set -- Sources Samples
fi

files=$(find "$@" -name '*.swift' -type f | sort)
[ -n "$files" ] || { echo "check-portability: no Swift files under $*" >&2; exit 2; }

# shellcheck disable=SC2086
awk '
  FNR == 1 { depth = 0 }
  {
    line = $0
    sub(/^[ \t]+/, "", line)
    if (line ~ /^\/\//) next
    if (line ~ /^#if[ \t(]/) {
      depth++
      platform[depth] = (line ~ /(os|canImport|targetEnvironment)\(/)
      next
    }
    if (line ~ /^#elseif[ \t(]/) {
      if (line ~ /(os|canImport|targetEnvironment)\(/) platform[depth] = 1
      next
    }
    if (line ~ /^#else/) next
    if (line ~ /^#endif/) { if (depth > 0) depth--; next }
    guarded = 0
    for (i = 1; i <= depth; i++) if (platform[i]) guarded = 1
    if (guarded) next
    code = line
    sub(/\/\/.*$/, "", code)
    symbol = ""
    if (code ~ /(^|[^A-Za-z0-9_])st_(m|a|c)tim([^A-Za-z0-9_e]|$)/) symbol = "st_mtim/st_atim/st_ctim (Linux only; Darwin has st_mtimespec)"
    else if (code ~ /(^|[^A-Za-z0-9_])st_(m|a|c)timespec([^A-Za-z0-9_]|$)/) symbol = "st_mtimespec (Darwin only; Linux has st_mtim)"
    else if (code ~ /^import[ \t]+(Glibc|Musl|Android|Bionic)([ \t]|$)/) symbol = "import of a Linux C library"
    else if (code ~ /^import[ \t]+(Darwin|ObjectiveC)([ \t]|$)/) symbol = "import of a Darwin-only module"
    else if (code ~ /FoundationNetworking/) symbol = "FoundationNetworking (Linux only)"
    if (symbol != "") {
      printf "%s:%d: %s outside #if os(...)/canImport(...): %s\n", FILENAME, FNR, symbol, line
      bad++
    }
  }
  END {
    if (bad > 0) { printf "check-portability: %d use(s) of platform-only APIs outside a platform condition\n", bad > "/dev/stderr"; exit 1 }
  }
' $files
echo "check-portability: ok ($(echo "$files" | wc -l) files)"
