import APITraceFormat
import APITraceTestSupport
import APITraceSynthetic
import Foundation

/// A day of a fleet's traffic with a known answer: eight devices on app 2.3.1 at baseline noise
/// (1-3% 5xx, some timeouts, 4xx, cancelled and offline requests, a quarter of successes sampled at
/// 0.25), then at `release` five of them move to 2.4.0, which fails a quarter of `/apps/{id}` with
/// a 503 and fails to decode some reviews. Written as real gzip trace files named as producers name them.
enum ReleaseTraffic {
    /// 2026-11-22T12:00:00Z: the end of the window.
    static let end: Int64 = 1_795_348_800_000
    /// 2.4.0 ships an hour before ``end``.
    static let release: Int64 = end - 3_600_000
    static let hour: Int64 = 3_600_000

    struct Route {
        var method: String, route: String, host: String, weight: Double, serverErrors: Double
    }

    static let routes: [Route] = [
        Route(method: "GET", route: "/apps", host: "api.example.com", weight: 20, serverErrors: 0.01),
        Route(method: "GET", route: "/apps/{id}", host: "api.example.com", weight: 25, serverErrors: 0.01),
        Route(method: "GET", route: "/apps/{id}/reviews", host: "api.example.com", weight: 10, serverErrors: 0.02),
        Route(method: "GET", route: "/news", host: "news.example.com", weight: 15, serverErrors: 0.01),
        Route(method: "GET", route: "/search", host: "api.example.com", weight: 8, serverErrors: 0.03),
        Route(method: "PUT", route: "/me/settings", host: "api.example.com", weight: 3, serverErrors: 0.01),
    ]

    /// Options for the traffic.
    struct Shape {
        /// How broken 2.4.0 is: the 503 share on `/apps/{id}` and the decode-failure share on reviews.
        var brokenAppsShare = 0.25
        var reviewDecodeShare = 0.08
        /// Scale of every failure rate (0: a fleet with no failures at all).
        var noise = 1.0
    }

    /// Writes the files into `folder`; returns their paths.
    @discardableResult
    static func write(to folder: String, shape: Shape = Shape()) throws -> [String] {
        var paths: [String] = []
        for device in 0..<8 {
            var random = SplitMix64(seed: UInt64(device) &* 7919 &+ 11)
            let producer = String(format: "d%07x", device + 1)
            // Baseline file: 26 h before the release (the first hour is outside a 24 h baseline).
            let upgraded = device < 5
            paths.append(try file(folder, producer: producer, sequence: 1, version: "2.3.1", start: release - 26 * hour,
                                  end: release, interval: 25_000, broken: false, shape: shape, random: &random))
            // After the release, until half an hour past the window's end (outside it).
            paths.append(try file(folder, producer: producer, sequence: 2, version: upgraded ? "2.4.0" : "2.3.1", start: release,
                                  end: end + hour / 2, interval: 5_000, broken: upgraded, shape: shape, random: &random))
        }
        return paths
    }

    private static func file(
        _ folder: String, producer: String, sequence: Int, version: String, start: Int64, end: Int64, interval: Double,
        broken: Bool, shape: Shape, random: inout SplitMix64
    ) throws -> String {
        var lines = [#"{"type":"header","format":"apitrace","version":1,"producer":"\#(producer)","app":"Otec","app_version":"\#(version)","started":"\#(iso(start))"}"#]
        var t = Double(start)
        let total = routes.reduce(0) { $0 + $1.weight }
        var session = 0
        while true {
            t += random.exponential(mean: interval)
            guard Int64(t) < end else { break }
            let ms = Int64(t)
            if random.unit() < 0.01 { session += 1 }
            var pick = random.unit() * total
            var route = routes[0]
            for r in routes { pick -= r.weight; if pick <= 0 { route = r; break } }
            let s = "\(producer)-\(session)"
            let u = random.unit()
            let serverErrors = broken && route.route == "/apps/{id}" ? shape.brokenAppsShare : route.serverErrors * shape.noise
            var fields = #""type":"request","ts":"\#(iso(ms))","session":"\#(s)","method":"\#(route.method)","route":"\#(route.route)","host":"\#(route.host)","duration_ms":\#(20 + Int(random.unit() * 200))"#
            let n = shape.noise
            if u < serverErrors {
                fields += #","status":503"#
            } else if u < serverErrors + 0.003 * n {
                fields += #","error":"URLError.timedOut""#
            } else if u < serverErrors + 0.023 * n {
                fields += #","status":404"#
            } else if u < serverErrors + 0.028 * n {
                fields += #","error":"URLError.cancelled""#
            } else if u < serverErrors + 0.031 * n {
                fields += #","error":"URLError.notConnectedToInternet""#
            } else {
                fields += #","status":200"#
                if random.unit() < 0.25 { fields += #","sample_rate":0.25"# }
            }
            lines.append("{\(fields)}")
            if broken, route.route == "/apps/{id}/reviews", random.unit() < shape.reviewDecodeShare {
                lines.append(#"{"type":"decode_failure","ts":"\#(iso(ms + 1))","session":"\#(s)","route":"/apps/{id}/reviews","entity":"Review","kind":"keyNotFound","path":"items[\#(Int(random.unit() * 20))].rating","key":"rating","message":"No value associated with key rating"}"#)
            }
        }
        let name = String(iso(start).prefix(19)).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "") + "Z"
        let path = "\(folder)/\(name)-\(producer)-\(String(format: "%04d", sequence)).jsonl.gz"
        try Data(try GzipDeflater.compress(Array((lines.joined(separator: "\n") + "\n").utf8))).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func iso(_ ms: Int64) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}

/// The comparison computed by Python's gzip and json modules from the files, following the
/// definition in Docs/report.md, independently of the Swift code.
enum PythonComparison {
    struct Side: Encodable {
        var since: Int64?
        var until: Int64?
        var app_version: String?
    }

    static let script = #"""
    import gzip, json, sys
    from datetime import datetime
    args = json.loads(sys.argv[1])
    CANCELLED = {"URLError.cancelled", "CancellationError", "NSURLErrorDomain#-999"}
    OFFLINE = {"URLError.notConnectedToInternet", "URLError.dataNotAllowed", "URLError.internationalRoamingOff",
               "URLError.callIsActive", "URLError.backgroundSessionWasDisconnected", "NSURLErrorDomain#-1009",
               "NSURLErrorDomain#-1020", "NSURLErrorDomain#-1018", "NSURLErrorDomain#-1019", "NSURLErrorDomain#-997"}
    TRAFFIC = ["route", "host", "app_version", "app_version_route"]
    FAILURE = ["error_identity", "decode_path", "outcome"]
    def ms(ts): return int(round(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000))
    def inside(side, t, version):
        if side.get("since") is not None and t < side["since"]: return False
        if side.get("until") is not None and t >= side["until"]: return False
        return side.get("app_version") is None or side["app_version"] == version
    rows = {s: {d: {} for d in TRAFFIC + FAILURE} for s in ("window", "baseline")}
    totals = {s: [0.0, 0.0] for s in ("window", "baseline")}
    def add(side, dim, key, req, fail):
        r = rows[side][dim].setdefault(key, [0.0, 0.0]); r[0] += req; r[1] += fail
    for path in args["files"]:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            version = json.loads(f.readline()).get("app_version", "-")
            for line in f:
                if not line.strip(): continue
                e = json.loads(line)
                t = ms(e["ts"])
                for side in ("window", "baseline"):
                    if not inside(args[side], t, version): continue
                    route = e.get("route") or "-"
                    if e["type"] == "request":
                        status, err = e.get("status"), e.get("error")
                        if status is not None:
                            outcome = "success" if status < 400 else "client_error" if status < 500 else "server_error"
                        else:
                            outcome = "cancelled" if err in CANCELLED else "offline" if err in OFFLINE else "transport"
                        if outcome in ("cancelled", "offline"): continue
                        failed = outcome in ("server_error", "transport")
                        rate = e.get("sample_rate")
                        weight = 1.0 / rate if outcome == "success" and rate is not None and 0.0001 <= rate <= 1 else 1.0
                        fail = 1.0 if failed else 0.0
                        for dim, key in (("route", route), ("host", e.get("host") or "-"), ("app_version", version),
                                         ("app_version_route", version + "\t" + route)):
                            add(side, dim, key, weight, fail)
                        totals[side][0] += weight; totals[side][1] += fail
                        if failed:
                            identity = err if err is not None else ("HTTP %d" % status if status is not None else "transport failure")
                            add(side, "error_identity", identity, 0, 1)
                            add(side, "outcome", outcome, 0, 1)
                    elif e["type"] == "decode_failure":
                        import re
                        path_ = re.sub(r"\[[0-9]+\]", "[*]", e.get("path", ""))
                        for dim, key in (("route", route), ("app_version", version), ("app_version_route", version + "\t" + route),
                                         ("decode_path", e["entity"] + (" " + path_ if path_ else "")), ("outcome", "decode_failure")):
                            add(side, dim, key, 0, 1)
                        totals[side][1] += 1
    W, B = totals["window"], totals["baseline"]
    overall = B[1] / B[0] if B[0] > 0 else 0.0
    out = {"window": W, "baseline": B, "excess": max(0.0, W[1] - W[0] * overall), "dims": {}}
    for dim in TRAFFIC + FAILURE:
        keys = set(rows["window"][dim]) | set(rows["baseline"][dim])
        result = {}
        for k in keys:
            wr, wf = rows["window"][dim].get(k, [0.0, 0.0])
            br, bf = rows["baseline"][dim].get(k, [0.0, 0.0])
            if B[0] <= 0: rate = 0.0
            elif dim in FAILURE: rate = bf / B[0]
            elif br > 0: rate = bf / br
            elif dim == "app_version_route" and rows["baseline"]["route"].get(k.split("\t", 1)[1], [0, 0])[0] > 0:
                r = rows["baseline"]["route"][k.split("\t", 1)[1]]; rate = r[1] / r[0]
            else: rate = overall
            expected = (wr if dim in TRAFFIC else W[0]) * rate
            result[k] = {"wr": wr, "wf": wf, "br": br, "bf": bf, "expected": expected, "excess": max(0.0, wf - expected)}
        total = sum(r["excess"] for r in result.values())
        for r in result.values(): r["share"] = r["excess"] / total if total > 0 else 0.0
        out["dims"][dim] = {k: r for k, r in result.items() if r["excess"] > 0}
    json.dump(out, sys.stdout)
    """#

    /// Runs the script over `files` with the two sides; returns its JSON.
    static func run(files: [String], window: Side, baseline: Side) async throws -> [String: Any] {
        let dir = TemporaryDirectory()
        try script.write(toFile: dir.file("compare.py"), atomically: true, encoding: .utf8)
        struct Args: Encodable { var files: [String]; var window: Side; var baseline: Side }
        let args = String(decoding: try JSONEncoder().encode(Args(files: files, window: window, baseline: baseline)), as: UTF8.self)
        let out = try await runOffPool("/usr/bin/env", ["python3", dir.file("compare.py"), args])
        struct Failed: Error, CustomStringConvertible { var description: String }
        guard out.status == 0 else { throw Failed(description: "python3: " + String(decoding: out.stderr, as: UTF8.self)) }
        guard let object = try JSONSerialization.jsonObject(with: out.stdout) as? [String: Any] else { throw Failed(description: "python3 printed no object") }
        return object
    }
}
