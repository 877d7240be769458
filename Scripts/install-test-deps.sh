#!/bin/sh
# Installs the Python engines the collection tests query the collector's folder with:
# DuckDB and chdb (ClickHouse's engine in-process). Run once before `swift test` (CI: .ci/run).
set -eu
python3 -m pip install --quiet --disable-pip-version-check "duckdb>=1.0" "chdb>=2.0"
python3 -c 'import duckdb, chdb; print("duckdb", duckdb.__version__, "chdb", chdb.__version__)'
