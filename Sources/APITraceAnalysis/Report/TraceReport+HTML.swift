import APITraceFormat
import Foundation

extension TraceReport {
    /// Renders the report as one self-contained HTML page: inline CSS, charts as inline SVG, no
    /// scripts and no network access needed to view it.
    public func renderHTML() -> String {
        typealias F = ReportNumberFormatting
        let h = Self.escapeHTML
        func table(_ headers: [String], _ right: Set<Int>, _ rows: [[String]], rowClass: (Int) -> String? = { _ in nil }) -> String {
            var out = "<table><thead><tr>"
            for (i, header) in headers.enumerated() { out += "<th\(right.contains(i) ? " class=\"num\"" : "")>\(h(header))</th>" }
            out += "</tr></thead><tbody>\n"
            for (r, row) in rows.enumerated() {
                out += "<tr\(rowClass(r).map { " class=\"\($0)\"" } ?? "")>"
                for (i, cell) in row.enumerated() { out += "<td\(right.contains(i) ? " class=\"num\"" : "")>\(cell)</td>" }
                out += "</tr>\n"
            }
            return out + "</tbody></table>\n"
        }
        var out = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>apitrace report</title>
            <style>
            body{font:14px/1.45 -apple-system,system-ui,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#1d1d1f}
            h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
            table{border-collapse:collapse;width:100%;margin:.5em 0}th,td{padding:.3em .6em;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
            th{background:#f5f5f7;font-weight:600}.num{text-align:right;font-variant-numeric:tabular-nums}
            tr.bad td{background:#fff0f0}tr.warn td{background:#fffbea}tr.missing td{background:#ffe5e5;font-weight:600}
            code{font:12px ui-monospace,Menlo,monospace;background:#f5f5f7;padding:0 .25em;border-radius:3px}
            .muted{color:#6e6e73}.defs li{color:#444}svg{max-width:100%;height:auto}.legend span{margin-right:1.2em}
            .sw{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:middle}
            </style></head><body>
            <h1>apitrace report</h1>

            """
        out += "<p>\(F.count(input.filesRead)) file\(input.filesRead == 1 ? "" : "s"), \(F.count(totals.events)) events"
        if let firstEvent, let lastEvent { out += ", \(h(firstEvent.rfc3339)) to \(h(lastEvent.rfc3339)) (\(h(F.span(spanSeconds))))" }
        out += ".<br><span class=\"muted\">Read from: \(input.sources.map { "<code>\(h($0))</code>" }.joined(separator: ", "))</span></p>\n"

        let t = totals
        out += "<h2>Totals</h2>\n"
        out += table(["", "count", "rate"], [1, 2], [
            ["events", F.count(t.events), ""],
            ["requests", F.count(t.requests) + (t.sampledRequests > 0 ? " (~\(F.estimate(t.estimatedRequests)) unsampled)" : ""), ""],
            ["errors (transport + 5xx\(options.includeDecodeFailures ? " + decode" : ""))", F.count(t.errors), F.percent(t.errorRate)],
            ["client errors (4xx)", F.count(t.clientErrors), F.percent(t.clientErrorRate)],
            ["decode failures", F.count(t.decodeFailures), F.percent(t.decodeFailureRate)],
            ["recorded errors", F.count(t.recordedErrors), ""],
            ["dropped by producers", F.count(t.dropped), ""],
            ["latency p50 / p95 / p99", "\(F.duration(t.latency.p50)) / \(F.duration(t.latency.p95)) / \(F.duration(t.latency.p99))", ""],
        ])

        out += comparisonHTML()
        out += "<h2>Error rate over time</h2>\n" + errorRateChart()
        out += "<h2>Latency per route</h2>\n" + latencyChart()

        out += "<h2>Routes</h2>\n"
        out += routes.isEmpty ? "<p>No requests.</p>\n" : table(
            ["method", "route", "requests", "5xx", "4xx", "transport", "decode", "error rate", "sessions with errors", "p50", "p95", "p99", "bytes in"],
            Set(2...12),
            routes.map { r in
                [h(r.method), "<code>\(h(r.route))</code>", F.count(r.requests), F.count(r.serverErrors), F.count(r.clientErrors),
                 F.count(r.transportErrors), F.count(r.decodeFailures), F.percent(r.errorRate), r.sessionsWithErrors.text, F.duration(r.latency.p50),
                 F.duration(r.latency.p95), F.duration(r.latency.p99), F.bytes(r.bytesIn)]
            }, rowClass: { routes[$0].errorRate >= 0.05 ? "bad" : routes[$0].errorRate >= 0.01 ? "warn" : nil })

        out += "<h2>Errors by identity</h2>\n"
        out += errors.isEmpty ? "<p>None.</p>\n" : table(["count", "sessions", "identity", "source", "first seen", "last seen", "routes", "example"], [0, 1], errors.map { e in
            [F.count(e.occurrences), e.sessions.text, "<code>\(h(e.identity))</code>", h(e.source), TraceReport.shortTime(e.firstSeen), TraceReport.shortTime(e.lastSeen),
             h(e.routes.prefix(3).map { "\($0.route) (\(F.count($0.count)))" }.joined(separator: ", ")), h(e.examples.first ?? "")]
        })

        out += "<h2>Decode failures</h2>\n"
        out += decodeFailures.isEmpty ? "<p>None.</p>\n" : table(["count", "sessions", "entity", "kind", "path", "first seen", "last seen", "routes", "example"], [0, 1], decodeFailures.map { d in
            [F.count(d.count), d.sessions.text, h(d.entity), d.isMissingKey ? "missing key <code>\(h(d.key ?? d.path))</code>" : h(d.kind),
             "<code>\(h(d.path))</code>", TraceReport.shortTime(d.firstSeen), TraceReport.shortTime(d.lastSeen), h(d.routes.prefix(3).map { "\($0.route) (\(F.count($0.count)))" }.joined(separator: ", ")),
             d.examplePaths.first.map { "<code>\(h($0))</code>" } ?? ""]
        }, rowClass: { decodeFailures[$0].isMissingKey ? "missing" : nil })

        if options.byAppVersion {
            out += "<h2>By app version</h2>\n"
            out += appVersions.isEmpty ? "<p>None.</p>\n" : table(
                ["app version", "files", "events", "requests", "errors", "error rate", "4xx", "decode", "recorded", "sessions affected", "first seen", "last seen"],
                Set(1...9),
                appVersions.map { v in
                    ["<code>\(h(v.appVersion))</code>", F.count(v.files), F.count(v.events), F.count(v.requests), F.count(v.errors),
                     F.percent(v.errorRate), F.count(v.clientErrors), F.count(v.decodeFailures), F.count(v.recordedErrors),
                     v.sessionsAffected.text, TraceReport.shortTime(v.firstSeen), TraceReport.shortTime(v.lastSeen)]
                }, rowClass: { appVersions[$0].errorRate >= 0.05 ? "bad" : appVersions[$0].errorRate >= 0.01 ? "warn" : nil })
        }

        out += "<h2>Server-Sent Events</h2>\n"
        if sse.connections + sse.reconnects + sse.fails + sse.closes == 0 {
            out += "<p>None.</p>\n"
        } else {
            let d = sse.reconnectDelay
            out += "<ul><li>connections \(F.count(sse.connections)), closed \(F.count(sse.closes)), gave up \(F.count(sse.fails))</li>"
            out += "<li>reconnects \(F.count(sse.reconnects))\(sse.reconnectsPerHour.map { " (\(F.number($0)) per hour)" } ?? "")</li>"
            out += "<li>reasons: \(h(sse.reasons.map { "\($0.reason) \(F.count($0.count))" }.joined(separator: ", ")))</li>"
            out += "<li>reconnect delay: p50 \(F.duration(d.p50)), p95 \(F.duration(d.p95)), p99 \(F.duration(d.p99))</li>"
            out += "<li>events per connection: mean \(sse.meanEventsPerConnection.map { F.number($0) } ?? "-")</li></ul>\n"
        }

        out += "<h2>WebSockets</h2>\n"
        if webSocket.isEmpty {
            out += "<p>None.</p>\n"
        } else {
            let ws = webSocket
            out += "<ul><li>\(h(ws.headline))</li>"
            out += "<li>abnormal closes by code: \(h(ws.abnormalByCode.map { "\($0.code) \(F.count($0.count))" }.joined(separator: ", ")))</li>"
            out += "<li>by reason: \(h(ws.abnormalByReason.map { "\(Self.clip($0.reason, 48)) \(F.count($0.count))" }.joined(separator: ", ")))</li>"
            out += "<li>\(h(ws.trafficLine))</li><li>\(h(ws.delayLine))</li></ul>\n"
            out += table(["route", "connections", "closes", "abnormal", "reconnects", "gave up", "messages in"], [1, 2, 3, 4, 5, 6],
                ws.routes.map { r in
                    [h(r.route), F.count(r.counts.opens), F.count(r.counts.closes), F.count(r.counts.abnormalCloses),
                     F.count(r.counts.reconnects), F.count(r.counts.fails), F.count(Int(clamping: r.counts.messagesIn))]
                }, rowClass: { ws.routes[$0].counts.abnormalCloses > 0 ? "warn" : nil })
            if ws.routesOmitted > 0 { out += "<p>... \(F.count(ws.routesOmitted)) more routes (see <code>--format json</code>).</p>\n" }
        }

        if !input.warnings.isEmpty {
            out += "<h2>Warnings</h2>\n<ul>" + input.warnings.map { "<li>\(h($0))</li>" }.joined() + "</ul>\n"
        }
        // The numbers come first; what they mean closes the page.
        out += "<h2>Definitions</h2>\n<ul class=\"defs\">" + definitions.map { "<li>\(h($0))</li>" }.joined() + "</ul>\n"
        out += "</body></html>\n"
        return out
    }

    /// Error rate per bucket as a line over faint request-count bars.
    func errorRateChart() -> String {
        let points = timeSeries.points
        guard !points.isEmpty else { return "<p>No requests.</p>\n" }
        let width = 1000.0, height = 220.0, left = 56.0, bottom = 24.0, top = 10.0
        let plotW = width - left - 10, plotH = height - bottom - top
        let maxRate = max(points.map(\.errorRate).max() ?? 0, 0.001)
        let maxRequests = Double(max(points.map(\.requests).max() ?? 1, 1))
        let step = plotW / Double(points.count)
        var svg = "<svg viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"Error rate over time\">\n"
        for (i, p) in points.enumerated() {
            let h = Double(p.requests) / maxRequests * plotH
            svg += "<rect x=\"\(fmt(left + Double(i) * step))\" y=\"\(fmt(top + plotH - h))\" width=\"\(fmt(max(step - 1, 0.5)))\" height=\"\(fmt(h))\" fill=\"#d6e4f5\"><title>\(Self.escapeHTML(p.start.rfc3339)): \(p.requests) requests, \(p.errors) errors (\(ReportNumberFormatting.percent(p.errorRate)))</title></rect>\n"
        }
        let line = points.enumerated().map { i, p in
            "\(fmt(left + (Double(i) + 0.5) * step)),\(fmt(top + plotH - p.errorRate / maxRate * plotH))"
        }.joined(separator: " ")
        svg += "<polyline points=\"\(line)\" fill=\"none\" stroke=\"#d70015\" stroke-width=\"2\"/>\n"
        svg += "<line x1=\"\(fmt(left))\" y1=\"\(fmt(top + plotH))\" x2=\"\(fmt(width - 10))\" y2=\"\(fmt(top + plotH))\" stroke=\"#999\"/>\n"
        svg += "<text x=\"\(fmt(left - 4))\" y=\"\(fmt(top + 10))\" font-size=\"11\" text-anchor=\"end\" fill=\"#d70015\">\(ReportNumberFormatting.percent(maxRate))</text>\n"
        svg += "<text x=\"\(fmt(left - 4))\" y=\"\(fmt(top + plotH))\" font-size=\"11\" text-anchor=\"end\" fill=\"#666\">0</text>\n"
        svg += "<text x=\"\(fmt(left))\" y=\"\(fmt(height - 6))\" font-size=\"11\" fill=\"#666\">\(Self.escapeHTML(points[0].start.rfc3339))</text>\n"
        svg += "<text x=\"\(fmt(width - 10))\" y=\"\(fmt(height - 6))\" font-size=\"11\" text-anchor=\"end\" fill=\"#666\">\(Self.escapeHTML(points[points.count - 1].start.rfc3339))</text>\n"
        svg += "</svg>\n"
        svg += "<p class=\"legend muted\"><span><i class=\"sw\" style=\"background:#d70015\"></i>error rate (bucket \(ReportNumberFormatting.bucket(timeSeries.bucketSeconds)))</span><span><i class=\"sw\" style=\"background:#d6e4f5\"></i>requests (max \(Int(maxRequests)) per bucket)</span></p>\n"
        return svg
    }

    /// p50, p95 and p99 per route as horizontal bars on a shared logarithmic scale, with a gridline
    /// per decade: one route's long tail (a p99 of seconds) would flatten every other bar on a linear one.
    func latencyChart() -> String {
        let rows = routes.filter { $0.requests > 0 }.prefix(25)
        guard !rows.isEmpty else { return "<p>No requests.</p>\n" }
        let width = 1000.0, label = 260.0, rowH = 30.0, barH = 7.0, axisH = 18.0
        let height = Double(rows.count) * rowH + 10 + axisH
        let plotW = width - label - 90
        let measured = rows.flatMap { [$0.latency.p50, $0.latency.p95, $0.latency.p99] }.compactMap { $0 }.filter { $0 > 0 }
        // From the decade below the fastest value to the slowest, at least one decade wide.
        let low = Foundation.pow(10, Foundation.floor(Foundation.log10(Swift.max(measured.min() ?? 1, 0.001))))
        let high = Swift.max(measured.max() ?? 1, low * 10)
        func x(_ value: Double) -> Double {
            value <= low ? 1 : Swift.max(1, Foundation.log10(value / low) / Foundation.log10(high / low) * plotW)
        }
        let colors = [("p50", "#34c759"), ("p95", "#ff9f0a"), ("p99", "#d70015")]
        var svg = "<svg viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"Latency percentiles per route, logarithmic scale\">\n"
        let plotBottom = 5 + Double(rows.count) * rowH
        var decade = low
        while decade <= high * 1.000001 {
            let gx = label + x(decade)
            svg += "<line x1=\"\(fmt(gx))\" y1=\"5\" x2=\"\(fmt(gx))\" y2=\"\(fmt(plotBottom))\" stroke=\"#ddd\" stroke-width=\"1\"/>"
            svg += "<text x=\"\(fmt(gx))\" y=\"\(fmt(plotBottom + 13))\" font-size=\"10\" text-anchor=\"middle\" fill=\"#666\">\(ReportNumberFormatting.duration(decade))</text>\n"
            decade *= 10
        }
        for (i, r) in rows.enumerated() {
            let y = 5 + Double(i) * rowH
            svg += "<text x=\"\(fmt(label - 8))\" y=\"\(fmt(y + 17))\" font-size=\"12\" text-anchor=\"end\">\(Self.escapeHTML(r.method + " " + r.route))</text>\n"
            for (j, (name, color)) in colors.enumerated() {
                let values: [Double?] = [r.latency.p50, r.latency.p95, r.latency.p99]
                let value = values[j] ?? 0
                svg += "<rect x=\"\(fmt(label))\" y=\"\(fmt(y + 3 + Double(j) * (barH + 1)))\" width=\"\(fmt(x(value)))\" height=\"\(fmt(barH))\" fill=\"\(color)\"><title>\(Self.escapeHTML(r.method + " " + r.route)) \(name) \(ReportNumberFormatting.duration(value))</title></rect>\n"
            }
            svg += "<text x=\"\(fmt(label + x(r.latency.p99 ?? 0) + 6))\" y=\"\(fmt(y + 17))\" font-size=\"11\" fill=\"#666\">\(ReportNumberFormatting.duration(r.latency.p99))</text>\n"
        }
        svg += "</svg>\n"
        svg += "<p class=\"legend muted\">" + colors.map { "<span><i class=\"sw\" style=\"background:\($0.1)\"></i>\($0.0)</span>" }.joined()
            + "<span>logarithmic scale</span></p>\n"
        return svg
    }

    private func fmt(_ x: Double) -> String { String(format: "%.1f", x) }

    static func escapeHTML(_ s: String) -> String { TextEscaping.html(s) }
}
