-- Requests per app and app version, over a collector's folder, in ClickHouse (or chdb).
-- The version is in each file's header line only, so every request is joined to the header of its file (_path).
-- errors: transport failures (no status) and statuses from 500 up (5xx and 6xx, as every command counts them); client_errors: 4xx; durations in ms.
WITH headers AS (
    SELECT _path AS path, app, app_version
    FROM file('traces/dt=*/*.jsonl.gz', 'JSONEachRow',
              'type Nullable(String), app Nullable(String), app_version Nullable(String)')
    WHERE type = 'header'
)
SELECT
    ifNull(h.app, '')                                  AS app,
    ifNull(h.app_version, '')                          AS app_version,
    count()                                            AS count,
    countIf(r.status IS NULL OR r.status >= 500)       AS errors,
    countIf(r.status >= 400 AND r.status < 500)        AS client_errors,
    quantileExactInclusive(0.50)(r.duration_ms)        AS p50_ms,
    quantileExactInclusive(0.95)(r.duration_ms)        AS p95_ms,
    quantileExactInclusive(0.99)(r.duration_ms)        AS p99_ms
FROM file('traces/dt=*/*.jsonl.gz', 'JSONEachRow',
          'type Nullable(String), status Nullable(Int64), duration_ms Nullable(Float64)') AS r
INNER JOIN headers AS h ON r._path = h.path
WHERE r.type = 'request'
GROUP BY app, app_version
ORDER BY count DESC, app, app_version
SETTINGS input_format_skip_unknown_fields = 1;
