import Foundation

/// Independent Python for the OTLP tests: a producer of trace files written without apitrace's
/// code (every field the mapping reads, sampled successes, hostile hosts), and a checker that
/// applies the mapping of Docs/otlp.md and the stable HTTP conventions on its own to the input and
/// compares what the receiver decoded: every span and log record exactly once, every attribute,
/// the ids, the times, and the metrics' weights computed here from `sample_rate`.
///
/// `python3 -c generate <folder> <seed> <requests>`; `python3 -c check <folder> <received.jsonl>`
/// prints `OK <spans> <logs>` or the differences, and exits 1 on any. `<folder>` may be several,
/// separated by `:` (files exported earlier and since deleted); a received file may also be
/// `export --output`'s OTLP JSON lines.
public enum OTLPExpectations {
    /// Writes two trace files of `requests` requests plus one event of each other type into `folder`.
    public static func generate(into folder: String, seed: Int = 7, requests: Int = 300) async throws {
        let out = try await runOffPool("/usr/bin/env", ["python3", "-c", script, "generate", folder, String(seed), String(requests)])
        guard out.status == 0 else { throw TimedOut(description: "generator failed: \(String(decoding: out.stderr, as: UTF8.self))") }
    }

    /// Checks `received` (the receiver's log, or `--output`'s lines) against the events of `folders`: `OK <spans> <logs>` or the problems.
    public static func check(_ folders: [String], received: String) async throws -> String {
        let out = try await runOffPool("/usr/bin/env", ["python3", "-c", script, "check", folders.joined(separator: ":"), received])
        return String(decoding: out.stdout + out.stderr, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public static let script = #"""
import gzip, json, math, os, random, sys
from collections import defaultdict

CANCELLED = {"URLError.cancelled", "CancellationError", "NSURLErrorDomain#-999"}
OFFLINE = {"URLError.notConnectedToInternet", "URLError.dataNotAllowed", "URLError.internationalRoamingOff",
           "URLError.callIsActive", "URLError.backgroundSessionWasDisconnected", "NSURLErrorDomain#-1009",
           "NSURLErrorDomain#-1020", "NSURLErrorDomain#-1018", "NSURLErrorDomain#-1019", "NSURLErrorDomain#-997"}
BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]

def iso(ms):
    import datetime
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)

def generate(folder, seed, count):
    rnd = random.Random(seed)
    os.makedirs(folder, exist_ok=True)
    hexid = lambda n: "".join(rnd.choice("0123456789abcdef") for _ in range(n))
    base = 1795334400000
    files = [[], []]
    t = base
    for i in range(count):
        t += rnd.randint(1, 40)
        e = {"type": "request", "ts": iso(t), "session": "s-%d" % (i % 3), "trace_id": hexid(32), "span_id": hexid(16),
             "method": rnd.choice(["GET", "POST"]), "route": rnd.choice(["/apps/{id}", "/news", "/v2/items/{id}/comments"]),
             "host": rnd.choice(["api.example.com", "eu.example.com"]), "duration_ms": round(rnd.uniform(0.5, 3000), 3),
             "attempt": rnd.choice([1, 1, 1, 2, 3])}
        if rnd.random() < 0.7: e["port"] = rnd.choice([443, 8443])
        kind = rnd.random()
        if kind < 0.55:
            e["status"] = rnd.choice([200, 201, 304])
            if rnd.random() < 0.5: e["sample_rate"] = rnd.choice([0.25, 0.1, 0.5])
        elif kind < 0.65: e["status"] = rnd.choice([404, 429])
        elif kind < 0.75: e["status"] = rnd.choice([500, 503])
        elif kind < 0.85: e["error"] = rnd.choice(["URLError.timedOut", "URLError.cannotConnectToHost"])
        elif kind < 0.92: e["error"] = "URLError.cancelled"
        else: e["error"] = "URLError.notConnectedToInternet"
        if rnd.random() < 0.4:
            e.update({"dns_ms": 3.5, "connect_ms": 12.25, "tls_ms": 8.0, "ttfb_ms": 40.5, "protocol": rnd.choice(["h2", "http/1.1"]), "reused": False})
        if rnd.random() < 0.1: e["bytes_in"] = rnd.randint(0, 100000)
        files[i % 2].append(e)
    t += 5
    # The other event types, with ids where they belong to a request.
    files[0].append({"type": "decode_failure", "ts": iso(t), "session": "s-0", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "span_id": "00f067aa0ba902b7",
                     "route": "/apps/{id}", "entity": "App", "kind": "keyNotFound", "path": "data.apps[3].stability", "key": "stability", "message": "No value for key"})
    files[0].append({"type": "error", "ts": iso(t + 1), "session": "s-0", "identity": "NewsError.offline", "message": "went away",
                     "user_info": {"screen": "home"}, "route": "/news", "file": "News.swift", "line": 42})
    files[1].append({"type": "sse", "ts": iso(t + 2), "session": "s-1", "trace_id": "0af7651916cd43dd8448eb211c80319c", "span_id": "b7ad6b7169203331",
                     "phase": "reconnect", "route": "/live", "attempt": 3, "delay_ms": 2000, "last_event_id": "ev-17", "reason": "network_error"})
    files[1].append({"type": "sse", "ts": iso(t + 3), "session": "s-1", "phase": "fail", "route": "/live", "reason": "http_status", "status": 502})
    files[1].append({"type": "log", "ts": iso(t + 4), "level": "warning", "message": "slow", "metadata": {"k": "v"}, "source": "net"})
    files[1].append({"type": "dropped", "ts": iso(t + 5), "count": 7, "reason": "buffer_full"})
    # A hostile host: user information must never reach url.full or server.address.
    files[1].append({"type": "request", "ts": iso(t + 6), "span_id": "%016x" % (0x1111111111111111 + seed), "trace_id": "22222222222222222222222222222222",
                     "method": "GET", "route": "/secret?token=abc", "host": "user:pw@evil.example.com", "status": 200, "duration_ms": 1})
    for n, events in enumerate(files):
        name = "20261122T%06dZ-0a1b2c3d-%04d.jsonl.gz" % (n, n + 1)
        header = {"type": "header", "format": "apitrace", "version": 1, "producer": "0a1b2c3d", "app": "OtlpApp", "app_version": "3.1.4",
                  "host": "device-9", "started": iso(base)}
        with gzip.open(os.path.join(folder, name), "wt") as f:
            f.write(json.dumps(header) + "\n")
            for e in events: f.write(json.dumps(e) + "\n")

def read_events(folders):
    events = []
    for folder in folders.split(":"):
      for name in sorted(os.listdir(folder)):
        if not name.endswith(".jsonl.gz") or name.startswith("."): continue
        with gzip.open(os.path.join(folder, name), "rt") as f:
            for line in f:
                e = json.loads(line)
                if e["type"] != "header": events.append(e)
    return events

def ms_of(ts):
    import datetime
    d = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    return int(round(d.timestamp() * 1000))

def attrs(items):
    out = {}
    for a in items or []:
        v = a.get("value", {})
        if "stringValue" in v: out[a["key"]] = v["stringValue"]
        elif "intValue" in v: out[a["key"]] = int(v["intValue"])
        elif "doubleValue" in v: out[a["key"]] = float(v["doubleValue"])
        elif "boolValue" in v: out[a["key"]] = v["boolValue"]
        else: out[a["key"]] = None
    return out

def outcome(e):
    s = e.get("status")
    if s is not None: return "success" if s < 400 else "client_error" if s < 500 else "server_error"
    err = e.get("error")
    if err in CANCELLED: return "cancelled"
    if err in OFFLINE: return "offline"
    return "transport"

def weight(e):
    r = e.get("sample_rate")
    if r is None or outcome(e) != "success" or not (0.0001 <= r <= 1): return 1.0
    return 1.0 / r

def decode_raw_json(message):
    # A line of `export --output`: OTLP JSON, read with the official classes (ids hex -> base64 as the Collector does).
    import base64
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as ts
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2 as ls
    from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2 as ms
    ids = {"traceId", "spanId", "parentSpanId"}
    def conv(node, f):
        if isinstance(node, dict): return {k: (f(v) if k in ids and isinstance(v, str) else conv(v, f)) for k, v in node.items()}
        if isinstance(node, list): return [conv(v, f) for v in node]
        return node
    kind = ts.ExportTraceServiceRequest if "resourceSpans" in message else ls.ExportLogsServiceRequest if "resourceLogs" in message else ms.ExportMetricsServiceRequest
    parsed = json_format.ParseDict(conv(message, lambda v: base64.b64encode(bytes.fromhex(v)).decode()), kind())
    return conv(json_format.MessageToDict(parsed), lambda v: base64.b64decode(v).hex())

def check(folder, received):
    problems = []
    events = read_events(folder)
    spans, logs, metrics = [], [], []
    for line in open(received):
        r = json.loads(line)
        if "body" not in r:
            r = {"body": decode_raw_json(r)}
        body = r["body"]
        if "refused" in body: continue
        for rs in body.get("resourceSpans", []):
            res = attrs(rs["resource"].get("attributes"))
            for ss in rs.get("scopeSpans", []):
                for s in ss.get("spans", []): spans.append((res, s))
        for rl in body.get("resourceLogs", []):
            res = attrs(rl["resource"].get("attributes"))
            for sl in rl.get("scopeLogs", []):
                for l in sl.get("logRecords", []): logs.append((res, l))
        for rm in body.get("resourceMetrics", []):
            res = attrs(rm["resource"].get("attributes"))
            for sm in rm.get("scopeMetrics", []):
                for m in sm.get("metrics", []): metrics.append((res, m))
    requests = [e for e in events if e["type"] == "request"]
    by_span = defaultdict(list)
    for res, s in spans: by_span[s.get("spanId")].append((res, s))
    if len(spans) != len(requests): problems.append("%d spans for %d requests" % (len(spans), len(requests)))
    for e in requests:
        got = by_span.get(e["span_id"], [])
        if len(got) != 1:
            problems.append("span %s arrived %d times" % (e["span_id"], len(got))); continue
        res, s = got[0]
        a = attrs(s.get("attributes"))
        want_res = {"service.name": "OtlpApp", "service.version": "3.1.4", "host.name": "device-9"}
        for k, v in want_res.items():
            if res.get(k) != v: problems.append("span %s resource %s=%r" % (e["span_id"], k, res.get(k)))
        if res.get("session.id") != e.get("session"): problems.append("span %s session.id %r" % (e["span_id"], res.get("session.id")))
        host = e["host"].rsplit("@", 1)[-1]
        port = e.get("port")
        path = e["route"].split("?")[0].split("#")[0]
        url = "%s://%s%s%s" % ("http" if port == 80 else "https", host, "" if port in (None, 443, 80) else ":%d" % port, path)
        want = {"http.request.method": e["method"], "server.address": host, "url.full": url, "url.template": path,
                "apitrace.outcome": outcome(e)}
        if port is not None: want["server.port"] = port
        if "status" in e: want["http.response.status_code"] = e["status"]
        if "error" in e: want["error.type"] = e["error"]
        elif e.get("status", 0) >= 400: want["error.type"] = str(e["status"])
        if e.get("attempt", 1) > 1: want["http.request.resend_count"] = e["attempt"] - 1
        if "protocol" in e: want["network.protocol.version"] = {"h2": "2", "http/1.1": "1.1"}[e["protocol"]]
        if "bytes_in" in e: want["http.response.body.size"] = e["bytes_in"]
        if weight(e) != 1: want["apitrace.weight"] = weight(e)
        for k, v in want.items():
            if a.get(k) != v: problems.append("span %s %s=%r, want %r" % (e["span_id"], k, a.get(k), v))
        for k, v in a.items():
            if "pw" in str(v) or "token" in str(v): problems.append("span %s leaks credentials in %s" % (e["span_id"], k))
        if "error.type" not in want and "error.type" in a: problems.append("span %s has error.type %r" % (e["span_id"], a["error.type"]))
        if s.get("name") != "%s %s" % (e["method"], path): problems.append("span %s name %r" % (e["span_id"], s.get("name")))
        if s.get("kind") != "SPAN_KIND_CLIENT": problems.append("span %s kind %r" % (e["span_id"], s.get("kind")))
        if s.get("traceId") != e["trace_id"]: problems.append("span %s trace id %r" % (e["span_id"], s.get("traceId")))
        end = ms_of(e["ts"]) * 1_000_000
        start = end - round(e["duration_ms"] * 1_000_000)
        if int(s.get("endTimeUnixNano", 0)) != end or abs(int(s.get("startTimeUnixNano", 0)) - start) > 1:
            problems.append("span %s times %s..%s, want %d..%d" % (e["span_id"], s.get("startTimeUnixNano"), s.get("endTimeUnixNano"), start, end))
        failed = outcome(e) in ("client_error", "server_error", "transport")
        code = s.get("status", {}).get("code")
        if failed != (code == "STATUS_CODE_ERROR") or (not failed and code is not None):
            problems.append("span %s status %r for outcome %s" % (e["span_id"], code, outcome(e)))
        names = [ev["name"] for ev in s.get("events", [])]
        if ("ttfb_ms" in e) != ("http.first_byte" in names): problems.append("span %s events %r" % (e["span_id"], names))
    others = [e for e in events if e["type"] != "request"]
    if len(logs) != len(others): problems.append("%d log records for %d other events" % (len(logs), len(others)))
    by_name = defaultdict(list)
    for res, l in logs: by_name[l.get("eventName")].append(l)
    for kind in ("decode_failure", "error", "sse", "log", "dropped"):
        want = sum(1 for e in others if e["type"] == kind)
        if len(by_name.get("apitrace." + kind, [])) != want: problems.append("%d %s records for %d events" % (len(by_name.get("apitrace." + kind, [])), kind, want))
        by_name["apitrace." + kind] = by_name.get("apitrace." + kind, [])[:1] if kind != "sse" else by_name.get("apitrace.sse", [])[:2]
    df = by_name.get("apitrace.decode_failure", [])
    if len(df) != 1: problems.append("decode failures: %d" % len(df))
    else:
        l = df[0]; a = attrs(l.get("attributes"))
        if (l.get("traceId"), l.get("spanId")) != ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"): problems.append("decode failure ids %r %r" % (l.get("traceId"), l.get("spanId")))
        for k, v in {"apitrace.decode.entity": "App", "apitrace.decode.kind": "keyNotFound", "apitrace.decode.path": "data.apps[3].stability",
                     "apitrace.decode.key": "stability", "url.template": "/apps/{id}"}.items():
            if a.get(k) != v: problems.append("decode failure %s=%r" % (k, a.get(k)))
        if l.get("severityNumber") != "SEVERITY_NUMBER_ERROR": problems.append("decode failure severity %r" % l.get("severityNumber"))
    sse = {attrs(l.get("attributes")).get("apitrace.sse.phase"): l for l in by_name.get("apitrace.sse", [])}
    rc = sse.get("reconnect")
    if rc is None: problems.append("no SSE reconnect record")
    else:
        a = attrs(rc.get("attributes"))
        if (rc.get("traceId"), rc.get("spanId")) != ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"): problems.append("sse ids")
        for k, v in {"url.template": "/live", "apitrace.sse.attempt": 3, "apitrace.sse.delay_ms": 2000.0, "apitrace.sse.last_event_id": "ev-17",
                     "apitrace.sse.reason": "network_error"}.items():
            if a.get(k) != v: problems.append("sse reconnect %s=%r" % (k, a.get(k)))
        if rc.get("severityNumber") != "SEVERITY_NUMBER_WARN": problems.append("sse reconnect severity %r" % rc.get("severityNumber"))
    if "fail" not in sse or attrs(sse["fail"].get("attributes")).get("http.response.status_code") != 502: problems.append("sse fail record")
    err = by_name.get("apitrace.error", [])
    if len(err) != 1 or attrs(err[0].get("attributes")).get("error.type") != "NewsError.offline" or err[0].get("traceId"): problems.append("error record %r" % err)
    lg = by_name.get("apitrace.log", [])
    if len(lg) != 1 or lg[0].get("severityNumber") != "SEVERITY_NUMBER_WARN" or lg[0].get("body", {}).get("stringValue") != "slow": problems.append("log record %r" % lg)
    dr = by_name.get("apitrace.dropped", [])
    if len(dr) != 1 or attrs(dr[0].get("attributes")).get("apitrace.dropped.count") != 7: problems.append("dropped record %r" % dr)
    # Metrics: the last metrics request holds the cumulative totals.
    if metrics:
        hist = defaultdict(lambda: [0.0] * (len(BUCKETS) + 1))
        sums = defaultdict(float)
        counts = defaultdict(float)
        for e in requests:
            key = (e["method"], e["route"].split("?")[0].split("#")[0], e["host"].rsplit("@", 1)[-1])
            w = weight(e)
            sec = e["duration_ms"] / 1000
            i = next((i for i, b in enumerate(BUCKETS) if sec <= b), len(BUCKETS))
            hist[key][i] += w
            sums[key] += sec * w
            counts[(e["method"], key[1])] += w
        last = {}
        for res, m in metrics: last[m["name"]] = (res, m)
        res, m = last.get("http.client.request.duration", ({}, {}))
        points = m.get("histogram", {}).get("dataPoints", [])
        if m.get("unit") != "s" or m.get("histogram", {}).get("aggregationTemporality") != "AGGREGATION_TEMPORALITY_CUMULATIVE": problems.append("histogram unit/temporality")
        seen = set()
        for p in points:
            a = attrs(p.get("attributes"))
            key = (a.get("http.request.method"), a.get("url.template"), a.get("server.address"))
            seen.add(key)
            if [float(b) for b in p.get("explicitBounds", [])] != BUCKETS: problems.append("bounds %r" % p.get("explicitBounds"))
            cumulative, want, prev = 0.0, [], 0
            for w in hist[key]:
                cumulative += w
                r = int(math.floor(cumulative + 0.5))
                want.append(r - prev); prev = r
            got = [int(c) for c in p.get("bucketCounts", [])]
            if got != want: problems.append("histogram %r buckets %r, want %r" % (key, got, want))
            if abs(float(p.get("sum", 0)) - sums[key]) > 1e-6 * max(1, sums[key]): problems.append("histogram %r sum %r, want %r" % (key, p.get("sum"), sums[key]))
            if int(p.get("count", 0)) != prev: problems.append("histogram %r count %r" % (key, p.get("count")))
        if seen != set(hist): problems.append("histogram series %r, want %r" % (sorted(seen), sorted(hist)))
        res, m = last.get("apitrace.http.client.requests", ({}, {}))
        total = defaultdict(float)
        for p in m.get("sum", {}).get("dataPoints", []):
            a = attrs(p.get("attributes"))
            total[(a.get("http.request.method"), a.get("url.template"))] += float(p.get("asDouble", 0))
        for key, w in counts.items():
            if abs(total[key] - w) > 1e-9 * max(1, w): problems.append("requests %r counted %r, want %r" % (key, total[key], w))
        if m.get("sum", {}).get("isMonotonic") is not True: problems.append("request counter not monotonic")
    else:
        problems.append("no metrics arrived")
    if problems:
        print("\n".join(problems[:40])); sys.exit(1)
    print("OK %d %d" % (len(spans), len(logs)))

if sys.argv[1] == "generate": generate(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
else: check(sys.argv[2], sys.argv[3])
"""#
}
