-- Requests per app and app version, over a collector's folder, in DuckDB.
-- The version is in each file's header line only, so every request is joined to the header of its file.
-- errors: transport failures (no status) and statuses from 500 up (5xx and 6xx, as every command counts them); client_errors: 4xx; durations in ms.
WITH lines AS (
    SELECT *
    FROM read_json(
        'traces/dt=*/*.jsonl.gz',
        format = 'newline_delimited',
        hive_partitioning = true,
        filename = true,
        columns = {type: 'VARCHAR', app: 'VARCHAR', app_version: 'VARCHAR', status: 'BIGINT', duration_ms: 'DOUBLE'}
    )
),
headers AS (
    SELECT filename, app, app_version FROM lines WHERE type = 'header'
)
SELECT
    coalesce(h.app, '')                                           AS app,
    coalesce(h.app_version, '')                                   AS app_version,
    count(*)                                                      AS count,
    count(*) FILTER (WHERE r.status IS NULL OR r.status >= 500)   AS errors,
    count(*) FILTER (WHERE r.status BETWEEN 400 AND 499)          AS client_errors,
    quantile_cont(r.duration_ms, 0.50)                            AS p50_ms,
    quantile_cont(r.duration_ms, 0.95)                            AS p95_ms,
    quantile_cont(r.duration_ms, 0.99)                            AS p99_ms
FROM lines r
JOIN headers h ON r.filename = h.filename
WHERE r.type = 'request'
GROUP BY 1, 2
ORDER BY count DESC, app, app_version;
