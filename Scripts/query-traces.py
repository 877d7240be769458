#!/usr/bin/env python3
"""Runs a per-route or per-app-version SQL file from Docs/sql over a trace folder and prints one JSON object per row.

    query-traces.py duckdb|clickhouse SQL_FILE TRACE_FOLDER

The SQL names its files as 'traces/dt=*/*.jsonl.gz'; 'traces' is replaced by TRACE_FOLDER.
"""
import json
import sys

engine, sql_file, folder = sys.argv[1], sys.argv[2], sys.argv[3].rstrip("/")
sql = open(sql_file).read().replace("'traces/dt=*/", "'" + folder + "/dt=*/")
keys = ["app", "app_version"] if "per-app-version" in sql_file else ["method", "route"]
columns = keys + ["count", "errors", "client_errors", "p50_ms", "p95_ms", "p99_ms"]
try:
    if engine == "duckdb":
        import duckdb
        rows = duckdb.sql(sql).fetchall()
    elif engine == "clickhouse":
        import chdb
        text = chdb.query(sql, "JSONCompactEachRow").bytes().decode()
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        sys.exit("engine must be duckdb or clickhouse")
except ModuleNotFoundError as error:
    sys.exit(f"python module {error.name} is missing: run Scripts/install-test-deps.sh")
for row in rows:
    print(json.dumps(dict(zip(columns, row))))
