import APITraceFormat
extension TraceReport {
    /// The version of the JSON schema, the `schema` field: `apitrace.report/1`.
    /// Fields are only ever added within a version; see `Docs/report.md`.
    public static let jsonSchema = "apitrace.report/1"

    /// Renders the report as JSON (schema ``jsonSchema``).
    public func renderJSON() -> String {
        typealias J = ReportJSONValue
        func percentiles(_ p: Percentiles) -> J {
            .object([("p50", .optional(p.p50)), ("p95", .optional(p.p95)), ("p99", .optional(p.p99)), ("max", .optional(p.max))])
        }
        func counts(_ d: [String: Int]) -> J { .object(d.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) }) }
        func ranked(_ list: [(route: String, count: Int)], key: String = "route") -> J {
            .array(list.map { .object([(key, .string($0.route)), ("count", .int($0.count))]) })
        }
        func sessions(_ c: Count) -> J { .object([("count", .int(c.value)), ("exact", .bool(c.exact))]) }
        let t = totals
        var fields: [(String, J)] = [
            ("schema", .string(Self.jsonSchema)),
            ("sources", .array(input.sources.map { .string($0) })),
            ("definitions", .object([
                ("error", .string(definitions[0])),
                ("client_error", .string(definitions[1])),
                ("decode_failure", .string(definitions[2])),
                ("rates", .string(definitions[3])),
                ("percentiles", .string(definitions[4])),
                ("include_decode_failures", .bool(options.includeDecodeFailures)),
                ("percentile_relative_error", .double(QuantileSketch.relativeError)),
                ("sessions", .string(Self.sessionsDefinition)),
                ("sessions_exact_up_to", .int(SessionCount.exactLimit)),
                ("sessions_standard_error", .double(SessionCount.standardError)),
            ])),
            ("span", .object([
                ("first", .optional(firstEvent?.rfc3339)),
                ("last", .optional(lastEvent?.rfc3339)),
                ("seconds", .double(spanSeconds)),
            ])),
            ("input", .object([
                ("files_read", .int(input.filesRead)),
                ("files_filtered", .int(input.filesFiltered)),
                ("files_unusable", .int(input.filesUnusable)),
                ("events_filtered", .int(input.eventsFiltered)),
                ("unknown_types", .int(input.unknownTypes)),
                ("invalid_lines", .int(input.invalidLines)),
                ("warnings", .array(input.warnings.map { .string($0) })),
                ("warnings_omitted", .int(input.warningsOmitted)),
            ])),
            ("totals", .object([
                ("events", .int(t.events)),
                ("events_by_type", counts(t.eventsByType)),
                ("requests", .int(t.requests)),
                ("estimated_requests", .double(t.estimatedRequests)),
                ("sampled_requests", .int(t.sampledRequests)),
                ("errors", .int(t.errors)),
                ("server_errors", .int(t.serverErrors)),
                ("transport_errors", .int(t.transportErrors)),
                ("client_errors", .int(t.clientErrors)),
                ("cancelled", .int(t.cancelled)),
                ("offline", .int(t.offline)),
                ("decode_failures", .int(t.decodeFailures)),
                ("error_rate", .double(t.errorRate)),
                ("client_error_rate", .double(t.clientErrorRate)),
                ("decode_failure_rate", .double(t.decodeFailureRate)),
                ("recorded_errors", .int(t.recordedErrors)),
                ("dropped", .int(t.dropped)),
                ("dropped_by_reason", counts(t.droppedByReason)),
                ("latency_ms", percentiles(t.latency)),
                ("bytes_in", .int(Int(t.bytesIn))),
                ("bytes_out", .int(Int(t.bytesOut))),
            ])),
            ("routes", .array(routes.map { r in
                .object([
                    ("method", .string(r.method)),
                    ("route", .string(r.route)),
                    ("requests", .int(r.requests)),
                    ("estimated_requests", .double(r.estimatedRequests)),
                    ("server_errors", .int(r.serverErrors)),
                    ("client_errors", .int(r.clientErrors)),
                    ("transport_errors", .int(r.transportErrors)),
                    ("decode_failures", .int(r.decodeFailures)),
                    ("errors", .int(r.errors)),
                    ("error_rate", .double(r.errorRate)),
                    ("sessions_with_errors", sessions(r.sessionsWithErrors)),
                    ("sessions_with_client_errors", sessions(r.sessionsWithClientErrors)),
                    ("latency_ms", percentiles(r.latency)),
                    ("bytes_in", .int(Int(r.bytesIn))),
                    ("bytes_out", .int(Int(r.bytesOut))),
                ])
            })),
            ("errors", .array(errors.map { e in
                .object([
                    ("identity", .string(e.identity)),
                    ("source", .string(e.source)),
                    ("occurrences", .int(e.occurrences)),
                    ("events", .int(e.events)),
                    ("suppressed", .int(e.suppressed)),
                    ("sessions", sessions(e.sessions)),
                    ("first_seen", .optional(e.firstSeen?.rfc3339)),
                    ("last_seen", .optional(e.lastSeen?.rfc3339)),
                    ("examples", .array(e.examples.map { .string($0) })),
                    ("routes", ranked(e.routes)),
                ])
            })),
            ("errors_omitted", .int(errorsOmitted)),
            ("decode_failures", .array(decodeFailures.map { d in
                .object([
                    ("entity", .string(d.entity)),
                    ("kind", .string(d.kind)),
                    ("path", .string(d.path)),
                    ("key", .optional(d.key)),
                    ("missing_key", .bool(d.isMissingKey)),
                    ("count", .int(d.count)),
                    ("sessions", sessions(d.sessions)),
                    ("first_seen", .optional(d.firstSeen?.rfc3339)),
                    ("last_seen", .optional(d.lastSeen?.rfc3339)),
                    ("routes", ranked(d.routes)),
                    ("example_paths", .array(d.examplePaths.map { .string($0) })),
                    ("example_messages", .array(d.exampleMessages.map { .string($0) })),
                ])
            })),
            ("sse", .object([
                ("connections", .int(sse.connections)),
                ("closes", .int(sse.closes)),
                ("reconnects", .int(sse.reconnects)),
                ("fails", .int(sse.fails)),
                ("reconnects_per_hour", .optional(sse.reconnectsPerHour)),
                ("reasons", ranked(sse.reasons.map { ($0.reason, $0.count) }, key: "reason")),
                ("reconnect_delay_ms", percentiles(sse.reconnectDelay)),
                ("events_per_connection", .object([
                    ("mean", .optional(sse.meanEventsPerConnection)),
                    ("p50", .optional(sse.eventsPerConnection.p50)),
                    ("p95", .optional(sse.eventsPerConnection.p95)),
                    ("p99", .optional(sse.eventsPerConnection.p99)),
                    ("max", .optional(sse.eventsPerConnection.max)),
                ])),
                ("routes", .array(sse.routes.map { r in
                    .object([
                        ("route", .string(r.route)), ("connections", .int(r.counts.opens)),
                        ("reconnects", .int(r.counts.reconnects)), ("fails", .int(r.counts.fails)),
                    ])
                })),
            ])),
            ("websocket", webSocketJSON()),
            ("app_versions", .array(appVersions.map { v in
                .object([
                    ("app_version", .string(v.appVersion)),
                    ("files", .int(v.files)),
                    ("events", .int(v.events)),
                    ("requests", .int(v.requests)),
                    ("errors", .int(v.errors)),
                    ("error_rate", .double(v.errorRate)),
                    ("client_errors", .int(v.clientErrors)),
                    ("decode_failures", .int(v.decodeFailures)),
                    ("recorded_errors", .int(v.recordedErrors)),
                    ("sessions_affected", sessions(v.sessionsAffected)),
                    ("first_seen", .optional(v.firstSeen?.rfc3339)),
                    ("last_seen", .optional(v.lastSeen?.rfc3339)),
                ])
            })),
            ("time_series", .object([
                ("bucket_seconds", .int(Int(timeSeries.bucketSeconds))),
                ("points", .array(timeSeries.points.map { p in
                    .object([
                        ("start", .string(p.start.rfc3339)),
                        ("requests", .int(p.requests)),
                        ("errors", .int(p.errors)),
                        ("client_errors", .int(p.clientErrors)),
                        ("decode_failures", .int(p.decodeFailures)),
                        ("error_rate", .double(p.errorRate)),
                    ])
                })),
            ])),
        ]
        if let comparison = comparisonJSON() { fields.append(("comparison", comparison)) }
        let doc: J = .object(fields)
        return doc.printed()
    }
}
