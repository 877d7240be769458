import Foundation
import APITraceFormat

extension TraceReport {
    /// Renders the report as aligned text, with ANSI colour when `colors` is true.
    public func renderText(colors: Bool = false) -> String {
        // Text from trace files is escaped for the terminal (tables escape their own cells).
        let T = TextEscaping.terminal
        typealias F = ReportNumberFormatting
        func heading(_ text: String) -> String { "\n" + ANSI.style(text, ANSI.bold, colors) + "\n" }
        func rateStyle(_ rate: Double) -> String? { rate >= 0.05 ? ANSI.red : rate >= 0.01 ? ANSI.yellow : nil }
        var out = ""

        // Header
        out += ANSI.style("apitrace report", ANSI.bold, colors)
        out += "  \(F.count(input.filesRead)) file\(input.filesRead == 1 ? "" : "s"), \(F.count(totals.events)) events"
        if let firstEvent, let lastEvent {
            out += ", \(firstEvent.rfc3339) to \(lastEvent.rfc3339) (\(F.span(spanSeconds)))"
        }
        out += "\n"
        if !input.sources.isEmpty { out += "read from: \(T(input.sources.joined(separator: ", ")))\n" }

        // Totals
        out += heading("TOTALS")
        var t = TextTable([("", .left), ("", .right), ("", .left)])
        t.headers = ["", "", ""]
        let types = totals.eventsByType.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            .map { "\($0.key) \(F.count($0.value))" }.joined(separator: ", ")
        t.add(["events", F.count(totals.events), types])
        var requests = F.count(totals.requests)
        if totals.sampledRequests > 0 { requests += " (~\(F.estimate(totals.estimatedRequests)) unsampled)" }
        t.add(["requests", requests, ""])
        let errorParts = "5xx \(F.count(totals.serverErrors)), transport \(F.count(totals.transportErrors))"
            + (options.includeDecodeFailures ? ", decode \(F.count(totals.decodeFailures))" : "")
        t.add(["errors", F.count(totals.errors), "\(F.percent(totals.errorRate))  (\(errorParts))"], style: rateStyle(totals.errorRate))
        t.add(["client errors (4xx)", F.count(totals.clientErrors), F.percent(totals.clientErrorRate)])
        if totals.cancelled + totals.offline > 0 {
            t.add(["client-side", F.count(totals.cancelled + totals.offline),
                   "cancelled \(F.count(totals.cancelled)), offline \(F.count(totals.offline)); in no rate"])
        }
        t.add(["decode failures", F.count(totals.decodeFailures), "\(F.percent(totals.decodeFailureRate)) of requests"],
              style: totals.decodeFailures > 0 ? ANSI.yellow : nil)
        t.add(["recorded errors", F.count(totals.recordedErrors), ""])
        let dropped = totals.droppedByReason.sorted { $0.key < $1.key }.map { "\(T($0.key)) \(F.count($0.value))" }.joined(separator: ", ")
        t.add(["dropped by producers", F.count(totals.dropped), dropped], style: totals.dropped > 0 ? ANSI.yellow : nil)
        let l = totals.latency
        t.add(["latency", "", "p50 \(F.duration(l.p50)), p95 \(F.duration(l.p95)), p99 \(F.duration(l.p99)), max \(F.duration(l.max))"])
        t.add(["bytes", "", "in \(F.bytes(totals.bytesIn)), out \(F.bytes(totals.bytesOut))"])
        out += t.render(colors: colors).split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n")

        // Routes
        out += comparisonText(colors: colors)

        out += heading("ROUTES")
        if routes.isEmpty {
            out += "  no requests\n"
        } else {
            var r = TextTable([
                ("METHOD", .left), ("ROUTE", .left), ("REQUESTS", .right), ("5XX", .right), ("4XX", .right),
                ("TRANSPORT", .right), ("DECODE", .right), ("ERROR %", .right), ("SESSIONS W/ ERRORS", .right),
                ("P50", .right), ("P95", .right), ("P99", .right), ("BYTES IN", .right),
            ])
            for row in routes.prefix(50) {
                r.add([
                    row.method, row.route, F.count(row.requests), F.count(row.serverErrors), F.count(row.clientErrors),
                    F.count(row.transportErrors), F.count(row.decodeFailures), F.percent(row.errorRate),
                    row.sessionsWithErrors.text, F.duration(row.latency.p50), F.duration(row.latency.p95), F.duration(row.latency.p99), F.bytes(row.bytesIn),
                ], style: rateStyle(row.errorRate))
            }
            out += r.render(colors: colors)
            if routes.count > 50 { out += "  ... \(routes.count - 50) more routes (see --format json)\n" }
        }

        // Errors
        out += heading("ERRORS BY IDENTITY")
        if errors.isEmpty {
            out += "  none\n"
        } else {
            var e = TextTable([
                ("COUNT", .right), ("SESSIONS", .right), ("IDENTITY", .left), ("SOURCE", .left), ("FIRST SEEN", .left),
                ("LAST SEEN", .left), ("ROUTES", .left), ("EXAMPLE", .left),
            ])
            for row in errors {
                let routes = row.routes.prefix(2).map { "\($0.route) (\(F.count($0.count)))" }.joined(separator: ", ")
                    + (row.routes.count > 2 ? ", ..." : "")
                e.add([
                    F.count(row.occurrences), row.sessions.text, row.identity, row.source, Self.shortTime(row.firstSeen),
                    Self.shortTime(row.lastSeen), routes, Self.clip(row.examples.first ?? "", 60),
                ])
            }
            out += e.render(colors: colors)
            if errorsOmitted > 0 { out += "  ... \(errorsOmitted) more identities\n" }
        }

        // Decode failures
        out += heading("DECODE FAILURES")
        if decodeFailures.isEmpty {
            out += "  none\n"
        } else {
            var d = TextTable([
                ("COUNT", .right), ("SESSIONS", .right), ("ENTITY", .left), ("KIND", .left), ("PATH", .left), ("FIRST SEEN", .left),
                ("LAST SEEN", .left), ("ROUTES", .left), ("EXAMPLE", .left),
            ])
            for row in decodeFailures {
                let kind = row.isMissingKey ? "MISSING KEY \"\(row.key ?? row.path)\"" : row.kind
                let routes = row.routes.prefix(2).map { "\($0.route) (\(F.count($0.count)))" }.joined(separator: ", ")
                d.add([F.count(row.count), row.sessions.text, row.entity, kind, row.path, Self.shortTime(row.firstSeen),
                       Self.shortTime(row.lastSeen), routes, row.examplePaths.first ?? ""],
                      style: row.isMissingKey ? ANSI.red + ANSI.bold : nil)
            }
            out += d.render(colors: colors)
        }

        // App versions
        if options.byAppVersion {
            out += heading("BY APP VERSION")
            if appVersions.isEmpty {
                out += "  none\n"
            } else {
                var v = TextTable([
                    ("APP VERSION", .left), ("FILES", .right), ("EVENTS", .right), ("REQUESTS", .right), ("ERRORS", .right),
                    ("ERROR %", .right), ("4XX", .right), ("DECODE", .right), ("RECORDED", .right), ("SESSIONS AFFECTED", .right),
                    ("FIRST SEEN", .left), ("LAST SEEN", .left),
                ])
                for row in appVersions {
                    v.add([
                        row.appVersion, F.count(row.files), F.count(row.events), F.count(row.requests), F.count(row.errors),
                        F.percent(row.errorRate), F.count(row.clientErrors), F.count(row.decodeFailures), F.count(row.recordedErrors),
                        row.sessionsAffected.text, Self.shortTime(row.firstSeen), Self.shortTime(row.lastSeen),
                    ], style: rateStyle(row.errorRate))
                }
                out += v.render(colors: colors)
            }
        }

        // SSE
        out += heading("SERVER-SENT EVENTS")
        if sse.connections + sse.reconnects + sse.fails + sse.closes == 0 {
            out += "  none\n"
        } else {
            out += "  connections \(F.count(sse.connections)), reconnects \(F.count(sse.reconnects))"
            if let perHour = sse.reconnectsPerHour { out += " (\(F.number(perHour)) per hour)" }
            out += ", gave up \(F.count(sse.fails)), closed \(F.count(sse.closes))\n"
            if !sse.reasons.isEmpty {
                out += "  reasons: " + sse.reasons.map { "\(T($0.reason)) \(F.count($0.count))" }.joined(separator: ", ") + "\n"
            }
            let d = sse.reconnectDelay
            out += "  reconnect delay: p50 \(F.duration(d.p50)), p95 \(F.duration(d.p95)), p99 \(F.duration(d.p99))\n"
            let e = sse.eventsPerConnection
            out += "  events per connection: mean \(sse.meanEventsPerConnection.map { F.number($0) } ?? "-"), "
                + "p50 \(e.p50.map { F.number($0, decimals: 0) } ?? "-"), p95 \(e.p95.map { F.number($0, decimals: 0) } ?? "-")\n"
        }

        // WebSockets
        out += heading("WEBSOCKETS")
        if webSocket.isEmpty {
            out += "  none\n"
        } else {
            let ws = webSocket
            out += "  " + ws.headline + "\n"
            if !ws.abnormalByCode.isEmpty {
                out += "  abnormal closes by code: " + ws.abnormalByCode.map { "\(T($0.code)) \(F.count($0.count))" }.joined(separator: ", ") + "\n"
            }
            if !ws.abnormalByReason.isEmpty {
                out += "  by reason: " + ws.abnormalByReason.map { "\(T(Self.clip($0.reason, 48))) \(F.count($0.count))" }.joined(separator: ", ") + "\n"
            }
            out += "  " + ws.trafficLine + "\n"
            out += "  " + ws.delayLine + "\n"
            var w = TextTable([
                ("ROUTE", .left), ("CONNECTIONS", .right), ("CLOSES", .right), ("ABNORMAL", .right), ("RECONNECTS", .right),
                ("GAVE UP", .right), ("MESSAGES IN", .right),
            ])
            for r in ws.routes {
                w.add([r.route, F.count(r.counts.opens), F.count(r.counts.closes), F.count(r.counts.abnormalCloses),
                       F.count(r.counts.reconnects), F.count(r.counts.fails), F.count(Int(clamping: r.counts.messagesIn))],
                      style: r.counts.abnormalCloses > 0 ? ANSI.yellow : nil)
            }
            out += w.render(colors: colors)
            if ws.routesOmitted > 0 { out += "  ... \(F.count(ws.routesOmitted)) more routes (see --format json)\n" }
        }

        // Time series
        out += heading("OVER TIME (bucket \(F.bucket(timeSeries.bucketSeconds)))")
        if timeSeries.points.isEmpty {
            out += "  no requests\n"
        } else {
            let points = timeSeries.points
            out += "  requests   " + Self.sparkline(points.map { Double($0.requests) }) + "\n"
            out += "  error rate " + Self.sparkline(points.map(\.errorRate)) + "\n"
            if let peak = points.max(by: { $0.errorRate < $1.errorRate }), peak.errors > 0 {
                out += "  peak error rate \(F.percent(peak.errorRate)) at \(peak.start.rfc3339) "
                    + "(\(F.count(peak.errors)) of \(F.count(peak.requests)) requests)\n"
            }
            if let busiest = points.max(by: { $0.requests < $1.requests }) {
                out += "  busiest bucket \(busiest.start.rfc3339): \(F.count(busiest.requests)) requests\n"
            }
        }

        // Input
        if !input.warnings.isEmpty || input.filesFiltered > 0 || input.eventsFiltered > 0 || input.invalidLines > 0 || input.unknownTypes > 0 {
            out += heading("INPUT")
            if input.filesFiltered > 0 { out += "  files skipped by the filter: \(F.count(input.filesFiltered))\n" }
            if input.eventsFiltered > 0 { out += "  events left out by the filter: \(F.count(input.eventsFiltered))\n" }
            if input.unknownTypes > 0 { out += "  lines of unknown event types skipped: \(F.count(input.unknownTypes))\n" }
            if input.invalidLines > 0 { out += "  invalid lines skipped: \(F.count(input.invalidLines))\n" }
            for warning in input.warnings { out += ANSI.style("  warning: \(T(warning))", ANSI.yellow, colors) + "\n" }
            if input.warningsOmitted > 0 { out += "  ... \(input.warningsOmitted) more warnings\n" }
        }

        // The numbers come first; what they mean closes the report.
        out += heading("DEFINITIONS")
        for line in definitions { out += ANSI.style("  \(line)", ANSI.dim, colors) + "\n" }
        return out
    }

    /// A time to the second (`2026-11-22T10:00:07Z`), `-` for none.
    static func shortTime(_ time: TraceTimestamp?) -> String {
        guard let text = time?.rfc3339 else { return "-" }
        return text.count == 24 ? String(text.prefix(19)) + "Z" : text
    }

    /// `text` on one line, at most `width` characters: cut at the last word boundary that fits
    /// (mid-word only when a single word is longer than half the width), with an ellipsis.
    static func clip(_ text: String, _ width: Int) -> String {
        let flat = text.replacingOccurrences(of: "\n", with: " ")
        guard flat.count > width else { return flat }
        let room = flat.prefix(width - 1)
        if let space = room.lastIndex(of: " "), room.distance(from: room.startIndex, to: space) >= width / 2 {
            return String(room[..<space]) + "…"
        }
        return String(room) + "…"
    }

    /// Eight-level block characters scaled to the largest value.
    static func sparkline(_ values: [Double]) -> String {
        let blocks = Array("▁▂▃▄▅▆▇█")
        let top = values.max() ?? 0
        guard top > 0 else { return String(repeating: blocks[0], count: values.count) }
        return String(values.map { blocks[min(7, Int(($0 / top) * 7.999))] })
    }
}
