#!/bin/sh
# Installs the reference tools some tests check apitrace's output against, when they are missing:
# prometheus_client (OpenMetrics parser), DuckDB and chdb (ClickHouse's engine in-process) for the
# collection queries. Run once before `swift test` (CI does, from .ci/run).
set -eu
if python3 -c 'import prometheus_client, duckdb, chdb' 2>/dev/null; then
  exit 0
fi
python3 -m pip install --quiet --disable-pip-version-check prometheus_client "duckdb>=1.0" "chdb>=2.0"
python3 -c 'import duckdb, chdb, prometheus_client; print("test tools: duckdb", duckdb.__version__, "chdb", chdb.__version__)'
