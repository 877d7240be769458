import APITraceTestSupport
import Foundation
import Testing

/// The HTML report in a real browser: headless Chromium (Debian package `chromium`, installed by
/// Scripts/install-test-deps.sh) renders the page to a PNG and dumps its DOM. The page must render
/// (many colours, the chart's red present), hold its sections and charts once parsed, log nothing
/// to the console, and need nothing from the network.
@Suite("HTML report in headless Chromium")
struct HTMLReportBrowserTests {
    /// Runs Chromium headless on `page` with `extra` arguments, on a thread of its own, killed after `timeout` seconds.
    static func chromium(_ page: String, _ extra: [String], in dir: TemporaryDirectory, timeout: Double = 60) async throws -> (status: Int32, stdout: String, stderr: String) {
        let profile = dir.file("profile-\(UUID().uuidString.prefix(8))")
        let arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
            "--disable-extensions", "--disable-background-networking", "--disable-component-update", "--hide-scrollbars",
            // Nothing may come from the network: every host name fails to resolve.
            "--host-resolver-rules=MAP * ~NOTFOUND", "--user-data-dir=\(profile)", "--enable-logging=stderr", "--v=0",
        ] + extra + [URL(fileURLWithPath: page).absoluteString]
        let executable = try #require(OutsideTool.chromium.path, "chromium is not installed: \(OutsideTool.installHint)")
        let browser = try ChildProcess(executable, arguments)
        try? await browser.waitForExit(seconds: timeout)
        if browser.isRunning {
            browser.stop()
            try? await browser.waitForExit(seconds: 2)
            if browser.isRunning { try await browser.kill(SIGKILL) }
        }
        return try await browser.finished()
    }

    /// Console messages Chromium logged (`...:CONSOLE...] "message", source: ...`).
    static func consoleLines(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }.map(String.init)
    }

    /// Decodes a PNG with Python's zlib (no imaging library): distinct colours, the share of
    /// pixels that are not white, and whether the charts' red (#d70015) is present.
    static let pngScript = #"""
    import json, struct, sys, zlib
    data = open(sys.argv[1], "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8]); body = data[pos + 8:pos + 8 + n]; pos += 12 + n
        if kind == b"IHDR": width, height, depth, ctype = struct.unpack(">IIBB", body[:10]); assert depth == 8, depth
        elif kind == b"IDAT": idat += body
    bpp = {2: 3, 6: 4}[ctype]
    raw, stride, prev, colours, coloured, red = zlib.decompress(idat), width * bpp, bytearray(width * bpp), set(), 0, 0
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0; b = prev[i]; c = prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        for x in range(0, stride, bpp):
            px = (line[x], line[x + 1], line[x + 2]); colours.add(px)
            if px != (255, 255, 255): coloured += 1
            if abs(px[0] - 215) < 8 and px[1] < 12 and abs(px[2] - 21) < 12: red += 1
    json.dump({"width": width, "height": height, "colours": len(colours), "coloured": coloured / (width * height), "red": red}, sys.stdout)
    """#

    @Test("the report with every new section renders in Chromium: non-blank PNG, charts in the DOM, no console output, no network", .requires(.chromium))
    func rendersInChromium() async throws {
        let dir = TemporaryDirectory()
        try await offPool { try ReleaseTraffic.write(to: dir.path) }
        let page = dir.file("report.html")
        let report = try await runOffPool(try builtProduct("apitrace").path, [
            "report", "--format", "html", "--by", "app_version", "--since", ReleaseTraffic.iso(ReleaseTraffic.release),
            "--until", ReleaseTraffic.iso(ReleaseTraffic.end), "--baseline", "24h", "--output", page, dir.path,
        ])
        #expect(report.status == 0, "\(String(decoding: report.stderr, as: UTF8.self))")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        // One self-contained file: nothing to fetch.
        for external in ["http://", "https://", "src=", "href=", "@import", "url(", "<script", "<link"] {
            #expect(!html.contains(external), "the page refers to \(external)")
        }

        let dom = try await Self.chromium(page, ["--dump-dom"], in: dir)
        #expect(dom.status == 0, "\(dom.stderr.suffix(2000))")
        #expect(Self.consoleLines(dom.stderr).isEmpty, "\(Self.consoleLines(dom.stderr))")
        // The browser parsed the sections and the three charts.
        for marker in ["<h2 id=\"compare\">Compared with baseline</h2>", "aria-label=\"Share of the extra failures\"",
                       "aria-label=\"Error rate over time\"", "aria-label=\"Latency percentiles per route", "<h2>By app version</h2>",
                       "sessions affected", "first seen", "last seen", "of the extra failures:", "/apps/{id} on app 2.4.0"] {
            #expect(dom.stdout.contains(marker), "the DOM lacks \(marker)")
        }
        #expect(dom.stdout.components(separatedBy: "<rect").count > 20)
        #expect(dom.stdout.contains("<polyline"))

        let png = dir.file("report.png")
        let shot = try await Self.chromium(page, ["--screenshot=\(png)", "--window-size=1280,1400"], in: dir)
        #expect(shot.status == 0, "\(shot.stderr.suffix(2000))")
        #expect(Self.consoleLines(shot.stderr).isEmpty)
        try Self.pngScript.write(toFile: dir.file("png.py"), atomically: true, encoding: .utf8)
        let decoded = try await runOffPool("/usr/bin/env", ["python3", dir.file("png.py"), png])
        #expect(decoded.status == 0, "\(String(decoding: decoded.stderr, as: UTF8.self))")
        let stats = try #require(try JSONSerialization.jsonObject(with: decoded.stdout) as? [String: Any])
        #expect(stats["width"] as? Int == 1280)
        #expect((stats["colours"] as? Int ?? 0) >= 50, "\(stats)")
        #expect((stats["coloured"] as? Double ?? 0) > 0.03, "\(stats)")
        #expect((stats["red"] as? Int ?? 0) > 200, "the charts' red is missing: \(stats)")
    }

    @Test("the console check catches a page that logs an error (so its silence above means something)", .requires(.chromium))
    func consoleCheckWorks() async throws {
        let dir = TemporaryDirectory()
        let page = dir.file("control.html")
        try "<!DOCTYPE html><html><body><p>control</p><script>console.error('control-error')</script></body></html>"
            .write(toFile: page, atomically: true, encoding: .utf8)
        let out = try await Self.chromium(page, ["--dump-dom"], in: dir)
        #expect(Self.consoleLines(out.stderr).contains { $0.contains("control-error") }, "\(out.stderr.suffix(2000))")
    }
}
