-- The per-route table of `apitrace report`, over a collector's folder, in DuckDB.
-- errors: transport failures (no status) and statuses from 500 up (5xx and 6xx, as every command counts them); client_errors: 4xx; durations in ms.
-- Percentiles interpolate linearly between the two closest ranks (quantile_cont).
SELECT
    method,
    route,
    count(*)                                                  AS count,
    count(*) FILTER (WHERE status IS NULL OR status >= 500)   AS errors,
    count(*) FILTER (WHERE status BETWEEN 400 AND 499)        AS client_errors,
    quantile_cont(duration_ms, 0.50)                          AS p50_ms,
    quantile_cont(duration_ms, 0.95)                          AS p95_ms,
    quantile_cont(duration_ms, 0.99)                          AS p99_ms
FROM read_json(
    'traces/dt=*/*.jsonl.gz',
    format = 'newline_delimited',
    hive_partitioning = true,
    columns = {type: 'VARCHAR', method: 'VARCHAR', route: 'VARCHAR', status: 'BIGINT', duration_ms: 'DOUBLE'}
)
WHERE type = 'request'
GROUP BY method, route
ORDER BY count DESC, method, route;
