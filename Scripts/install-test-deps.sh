#!/bin/sh
# Installs the reference tools some tests check apitrace's output against, when they are missing:
# Prometheus Alertmanager, Prometheus (promtool), Chromium (headless, for the HTML report), libdeflate, prometheus_client (OpenMetrics parser), DuckDB and chdb (ClickHouse's engine in-process) for the
# collection queries, websockets (a real WebSocket server) and opentelemetry-proto (the official OTLP
# definitions). Run once before `swift test` (CI does, from .ci/run). Without it, `swift test` skips
# the tests that need a missing tool and names it; under CI (CI set) those tests run and fail instead.
set -eu

# Prometheus Alertmanager (Debian package `prometheus-alertmanager`) for the alertmanager notifier's
# test, which starts a real one on 127.0.0.1. apt-get update runs once, only when it is missing
# (and not at all if .ci/run already ran it: APT_UPDATED=1).
if ! command -v prometheus-alertmanager >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  if [ "${APT_UPDATED:-0}" != 1 ]; then apt-get update -qq >/dev/null 2>&1 || true; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus-alertmanager >/dev/null 2>&1 ||
    echo "note: could not install prometheus-alertmanager; the Alertmanager test will be skipped" >&2
fi

# Prometheus (Debian package `prometheus`) for promtool, which checks and unit-tests the rules of
# `apitrace rules --format prometheus`, and for the tests that run a real Prometheus on 127.0.0.1.
# Only installed when missing; the package's service is not started (no init system in CI).
if ! command -v promtool >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  if [ "${APT_UPDATED:-0}" != 1 ]; then apt-get update -qq >/dev/null 2>&1 || true; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus >/dev/null 2>&1 ||
    echo "note: could not install prometheus; the promtool and Prometheus tests will be skipped" >&2
fi

# Chromium (Debian package `chromium`) for the test that renders the HTML report headless to a PNG
# and a DOM dump. Only installed when missing.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  if [ "${APT_UPDATED:-0}" != 1 ]; then apt-get update -qq >/dev/null 2>&1 || true; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 ||
    echo "note: could not install chromium; the HTML report browser test will fail" >&2
fi

# libdeflate (Debian package `libdeflate0`, the shared library alone): `apitrace export --format otlp`
# and the collector's forwarding gzip their bodies with it when it is there (zlib otherwise); the
# test of that path needs it. Only installed when missing.
if ! ls /usr/lib/*/libdeflate.so.0 >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  if [ "${APT_UPDATED:-0}" != 1 ]; then apt-get update -qq >/dev/null 2>&1 || true; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libdeflate0 >/dev/null 2>&1 ||
    echo "note: could not install libdeflate0; the libdeflate gzip test is skipped (and fails under CI)" >&2
fi

if python3 -c 'import prometheus_client, duckdb, chdb, websockets, opentelemetry.proto' 2>/dev/null; then
  exit 0
fi
python3 -m pip install --quiet --disable-pip-version-check prometheus_client "duckdb>=1.0" "chdb>=2.0" "websockets>=12" opentelemetry-proto
python3 -c 'import duckdb, chdb, prometheus_client, websockets, opentelemetry.proto; print("test tools: duckdb", duckdb.__version__, "chdb", chdb.__version__, "websockets", websockets.__version__)'
