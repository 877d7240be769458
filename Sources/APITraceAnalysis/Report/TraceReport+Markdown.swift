import APITraceFormat
import Foundation

extension TraceReport {
    /// Renders the report as GitHub-flavoured Markdown.
    public func renderMarkdown() -> String {
        typealias F = ReportNumberFormatting
        // Text from trace files goes through `text` (plain) or `c` (a code span); cells made here keep their markup.
        func cell(_ s: String) -> String { s.replacingOccurrences(of: "\n", with: " ") }
        let text = TextEscaping.markdownCell, c = TextEscaping.markdownCode
        func table(_ headers: [String], _ right: Set<Int>, _ rows: [[String]]) -> String {
            var out = "| " + headers.joined(separator: " | ") + " |\n|"
            for i in headers.indices { out += right.contains(i) ? " ---: |" : " --- |" }
            out += "\n"
            for row in rows { out += "| " + row.map(cell).joined(separator: " | ") + " |\n" }
            return out
        }
        var out = "# apitrace report\n\n"
        out += "\(F.count(input.filesRead)) file\(input.filesRead == 1 ? "" : "s"), \(F.count(totals.events)) events"
        if let firstEvent, let lastEvent { out += ", \(firstEvent.rfc3339) to \(lastEvent.rfc3339) (\(F.span(spanSeconds)))" }
        out += ".\n"
        if !input.sources.isEmpty { out += "Read from: " + input.sources.map { c($0) }.joined(separator: ", ") + ".\n" }
        out += "\n## Totals\n\n"
        let t = totals
        out += table(["", "count", "rate"], [1, 2], [
            ["events", F.count(t.events), ""],
            ["requests", F.count(t.requests) + (t.sampledRequests > 0 ? " (~\(F.estimate(t.estimatedRequests)) unsampled)" : ""), ""],
            ["errors (transport + 5xx\(options.includeDecodeFailures ? " + decode" : ""))", F.count(t.errors), F.percent(t.errorRate)],
            ["5xx", F.count(t.serverErrors), ""],
            ["transport failures", F.count(t.transportErrors), ""],
            ["client errors (4xx)", F.count(t.clientErrors), F.percent(t.clientErrorRate)],
            ["client-side: cancelled, offline (in no rate)", "\(F.count(t.cancelled)), \(F.count(t.offline))", ""],
            ["decode failures", F.count(t.decodeFailures), F.percent(t.decodeFailureRate)],
            ["recorded errors", F.count(t.recordedErrors), ""],
            ["dropped by producers", F.count(t.dropped), ""],
        ])
        let l = t.latency
        out += "\nLatency: p50 \(F.duration(l.p50)), p95 \(F.duration(l.p95)), p99 \(F.duration(l.p99)), max \(F.duration(l.max)).\n"

        out += comparisonMarkdown()

        out += "\n## Routes\n\n"
        out += routes.isEmpty ? "No requests.\n" : table(
            ["method", "route", "requests", "5xx", "4xx", "transport", "decode", "error rate", "sessions with errors", "p50", "p95", "p99", "bytes in"],
            Set(2...12),
            routes.map { r in
                [text(r.method), c(r.route), F.count(r.requests), F.count(r.serverErrors), F.count(r.clientErrors),
                 F.count(r.transportErrors), F.count(r.decodeFailures), F.percent(r.errorRate), r.sessionsWithErrors.text, F.duration(r.latency.p50),
                 F.duration(r.latency.p95), F.duration(r.latency.p99), F.bytes(r.bytesIn)]
            })

        out += "\n## Errors by identity\n\n"
        out += errors.isEmpty ? "None.\n" : table(["count", "sessions", "identity", "source", "first seen", "last seen", "routes", "example"], [0, 1], errors.map { e in
            [F.count(e.occurrences), e.sessions.text, c(e.identity), e.source, TraceReport.shortTime(e.firstSeen), TraceReport.shortTime(e.lastSeen),
             e.routes.prefix(3).map { "\(text($0.route)) (\(F.count($0.count)))" }.joined(separator: ", "), text(e.examples.first ?? "")]
        })
        if errorsOmitted > 0 { out += "\n\(errorsOmitted) more identities not listed.\n" }

        out += "\n## Decode failures\n\n"
        out += decodeFailures.isEmpty ? "None.\n" : table(["count", "sessions", "entity", "kind", "path", "first seen", "last seen", "routes", "example"], [0, 1], decodeFailures.map { d in
            [F.count(d.count), d.sessions.text, text(d.entity), d.isMissingKey ? "**missing key \(c(d.key ?? d.path))**" : text(d.kind), c(d.path),
             TraceReport.shortTime(d.firstSeen), TraceReport.shortTime(d.lastSeen),
             d.routes.prefix(3).map { "\(text($0.route)) (\(F.count($0.count)))" }.joined(separator: ", "), d.examplePaths.first.map { c($0) } ?? ""]
        })

        if options.byAppVersion {
            out += "\n## By app version\n\n"
            out += appVersions.isEmpty ? "None.\n" : table(
                ["app version", "files", "events", "requests", "errors", "error rate", "4xx", "decode", "recorded", "sessions affected", "first seen", "last seen"],
                Set(1...9),
                appVersions.map { v in
                    [c(v.appVersion), F.count(v.files), F.count(v.events), F.count(v.requests), F.count(v.errors), F.percent(v.errorRate),
                     F.count(v.clientErrors), F.count(v.decodeFailures), F.count(v.recordedErrors), v.sessionsAffected.text,
                     TraceReport.shortTime(v.firstSeen), TraceReport.shortTime(v.lastSeen)]
                })
        }

        out += "\n## Server-Sent Events\n\n"
        if sse.connections + sse.reconnects + sse.fails + sse.closes == 0 {
            out += "None.\n"
        } else {
            out += "- connections: \(F.count(sse.connections)), closed: \(F.count(sse.closes)), gave up: \(F.count(sse.fails))\n"
            out += "- reconnects: \(F.count(sse.reconnects))" + (sse.reconnectsPerHour.map { " (\(F.number($0)) per hour)" } ?? "") + "\n"
            out += "- reasons: " + sse.reasons.map { "\(text($0.reason)) \(F.count($0.count))" }.joined(separator: ", ") + "\n"
            let d = sse.reconnectDelay
            out += "- reconnect delay: p50 \(F.duration(d.p50)), p95 \(F.duration(d.p95)), p99 \(F.duration(d.p99))\n"
            out += "- events per connection: mean \(sse.meanEventsPerConnection.map { F.number($0) } ?? "-"), p50 "
                + "\(sse.eventsPerConnection.p50.map { F.number($0, decimals: 0) } ?? "-"), p95 \(sse.eventsPerConnection.p95.map { F.number($0, decimals: 0) } ?? "-")\n"
        }

        out += "\n## WebSockets\n\n"
        if webSocket.isEmpty {
            out += "None.\n"
        } else {
            let ws = webSocket
            out += "- " + ws.headline + "\n"
            out += "- abnormal closes by code: " + ws.abnormalByCode.map { "\(text($0.code)) \(F.count($0.count))" }.joined(separator: ", ") + "\n"
            out += "- by reason: " + ws.abnormalByReason.map { "\(text(Self.clip($0.reason, 48))) \(F.count($0.count))" }.joined(separator: ", ") + "\n"
            out += "- " + ws.trafficLine + "\n"
            out += "- " + ws.delayLine + "\n\n"
            out += table(["route", "connections", "closes", "abnormal", "reconnects", "gave up", "messages in"], [1, 2, 3, 4, 5, 6],
                ws.routes.map { r in
                    [c(r.route), F.count(r.counts.opens), F.count(r.counts.closes), F.count(r.counts.abnormalCloses),
                     F.count(r.counts.reconnects), F.count(r.counts.fails), F.count(Int(clamping: r.counts.messagesIn))]
                })
            if ws.routesOmitted > 0 { out += "\n... \(F.count(ws.routesOmitted)) more routes (see `--format json`).\n" }
        }

        out += "\n## Over time (bucket \(F.bucket(timeSeries.bucketSeconds)))\n\n"
        out += timeSeries.points.isEmpty ? "No requests.\n" : table(["start", "requests", "errors", "error rate", "4xx", "decode"], [1, 2, 3, 4, 5],
            timeSeries.points.map { p in
                [p.start.rfc3339, F.count(p.requests), F.count(p.errors), F.percent(p.errorRate), F.count(p.clientErrors), F.count(p.decodeFailures)]
            })

        if !input.warnings.isEmpty {
            out += "\n## Warnings\n\n" + input.warnings.map { "- " + text($0) }.joined(separator: "\n") + "\n"
            if input.warningsOmitted > 0 { out += "- ... \(input.warningsOmitted) more\n" }
        }
        // The numbers come first; what they mean closes the report.
        out += "\n## Definitions\n\n" + definitions.map { "- \($0)" }.joined(separator: "\n") + "\n"
        return out
    }
}
