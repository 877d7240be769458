-- The per-route table of `apitrace report`, over a collector's folder, in ClickHouse (or chdb).
-- errors: transport failures (no status) and statuses from 500 up (5xx and 6xx, as every command counts them); client_errors: 4xx; durations in ms.
-- quantileExactInclusive interpolates linearly like DuckDB's quantile_cont.
SELECT
    method,
    route,
    count()                                          AS count,
    countIf(status IS NULL OR status >= 500)         AS errors,
    countIf(status >= 400 AND status < 500)          AS client_errors,
    quantileExactInclusive(0.50)(duration_ms)        AS p50_ms,
    quantileExactInclusive(0.95)(duration_ms)        AS p95_ms,
    quantileExactInclusive(0.99)(duration_ms)        AS p99_ms
FROM file(
    'traces/dt=*/*.jsonl.gz',
    'JSONEachRow',
    'type Nullable(String), method Nullable(String), route Nullable(String), status Nullable(Int64), duration_ms Nullable(Float64)'
)
WHERE type = 'request'
GROUP BY method, route
ORDER BY count DESC, method, route
SETTINGS input_format_skip_unknown_fields = 1;
