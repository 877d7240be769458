#!/usr/bin/env python3
"""Writes Samples/Traces: one day of the Otec news app on eight devices, with a story in it.

- Traffic follows the day: almost nothing at night, a morning and an evening peak; each app launch is
  a session with its own trace file (as the writer names them: <start>-<producer>-<seq>.jsonl.gz).
- Release 2.4.0 reaches five of the eight devices during the day. Its `App` model requires `stability`,
  which some apps on the server lack: 2.4.0 records `decode_failure`s at data.apps[N].stability on
  /apps, and 2.3.1 never does.
- From 14:10 to 14:40 UTC the server fails GET /apps/{id}: 503s and timeouts on every device.
- Around it, what real clients do: cancellations, an offline device, 401s on /profile, 404s, SSE
  drops and reconnects, a few recorded errors.
- Live comments on a news item over a WebSocket (/news/{id}/comments, APITraceWebSocket's `websocket`
  events): most connections end with a normal close when the reader leaves; during the incident the
  server closes many with 1011 and the network drops others (1006), each followed by a reconnect; a
  deploy at 18:00 closes the open ones with 1001; now and then a ping goes unanswered (ping_timeout).
  They draw on their own random stream, so every other event stays as it was.

Deterministic (fixed seed): running it again writes the same bytes. Usage:
    python3 Scripts/make-sample-traces.py [OUT_DIR]   (default: Samples/Traces)
"""
import gzip
import json
import math
import os
import random
import sys
from datetime import datetime, timedelta, timezone

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "Samples", "Traces")
DAY = datetime(2026, 11, 23, tzinfo=timezone.utc)
INCIDENT = (DAY + timedelta(hours=14, minutes=10), DAY + timedelta(hours=14, minutes=40))
HOST = "api.otec.example"
rng = random.Random(20261123)
ws_rng = random.Random(2026112325)
DEPLOY = DAY + timedelta(hours=18)

# (producer, hour the device updates to 2.4.0 or None, hours of the day it is used most)
DEVICES = [
    ("3f9a1c2e", 9.5, (8, 19)),
    ("7b20d4a1", 11.0, (7, 21)),
    ("a14c9e07", 12.5, (9, 18)),
    ("c2d81f5b", 15.0, (6, 22)),
    ("e5a3b912", None, (8, 20)),
    ("f08c6d44", None, (10, 23)),
    ("19be7720", 17.0, (7, 22)),
    ("5d6e0c31", None, (11, 22)),
]

ROUTES = [  # method, route, weight, median ms
    ("GET", "/apps", 28, 120),
    ("GET", "/apps/{id}", 30, 80),
    ("GET", "/newspapers/{id}/news", 26, 140),
    ("POST", "/newspapers/{id}/news", 3, 220),
    ("GET", "/profile", 13, 60),
]


def ts(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def activity(hour):
    """Relative chance of an app launch at this hour: night low, morning and evening peaks."""
    return 0.03 + math.exp(-((hour - 8.5) ** 2) / 3) + 1.2 * math.exp(-((hour - 20) ** 2) / 4) + 0.5 * math.exp(-((hour - 13) ** 2) / 6)


def latency(median, slow=1.0):
    return round(median * slow * math.exp(rng.gauss(0, 0.5)), 3)


def request(t, session, method, route, version, in_incident, offline):
    event = {"type": "request", "ts": ts(t), "session": session, "trace_id": "%032x" % rng.getrandbits(128),
             "method": method, "route": route, "host": HOST}
    extra = []
    median = dict((r[1], r[3]) for r in ROUTES if r[0] == method)[route]
    if offline:
        event.update(duration_ms=latency(3), error="URLError.notConnectedToInternet", attempt=1)
        return event, extra
    if rng.random() < 0.012:
        event.update(duration_ms=latency(median / 2), error="URLError.cancelled", attempt=1)
        return event, extra
    if in_incident and route == "/apps/{id}" and method == "GET":
        roll = rng.random()
        if roll < 0.38:
            event.update(status=503, duration_ms=latency(40), bytes_in=112, bytes_out=0, attempt=1)
            return event, extra
        if roll < 0.48:
            event.update(duration_ms=round(rng.uniform(10000, 10060), 3), error="URLError.timedOut", attempt=1)
            return event, extra
        event.update(status=200, duration_ms=latency(median, 3.0), bytes_in=rng.randint(900, 2400), bytes_out=0, attempt=1)
        return event, extra
    status = 200
    if route == "/profile" and rng.random() < 0.02:
        status = 401
        extra.append({"type": "error", "ts": ts(t + timedelta(milliseconds=3)), "session": session,
                      "identity": "ProfileError.sessionExpired", "message": "ProfileError.sessionExpired",
                      "user_info": {"screen": "profile"}, "route": route, "file": "Otec/ProfileScreen.swift", "line": 88})
    elif route == "/apps/{id}" and rng.random() < 0.015:
        status = 404
    elif rng.random() < 0.002:
        status = 500
    body = rng.randint(400, 6000) if status == 200 else 96
    event.update(status=status, duration_ms=latency(median), bytes_in=body, bytes_out=rng.randint(200, 900) if method == "POST" else 0, attempt=1)
    if status == 200 and route == "/apps" and version == "2.4.0" and rng.random() < 0.35:
        index = rng.randint(0, 11)
        extra.append({"type": "decode_failure", "ts": ts(t + timedelta(milliseconds=2)), "session": session, "route": "/apps",
                      "entity": "App", "kind": "keyNotFound", "path": "data.apps[%d].stability" % index, "key": "stability",
                      "message": "decoding Envelope<AppsPayload>: No value associated with key CodingKeys(stringValue: \"stability\", intValue: nil) (\"stability\")."})
    return event, extra


def live_comments(start, end, session, offline_until=None):
    """WebSocket events of the live comments a session reads, from its own random stream."""
    events = []
    route = "/news/{id}/comments"
    t = start + timedelta(seconds=ws_rng.uniform(20, 120))
    if offline_until is not None and t < offline_until:
        t = offline_until + timedelta(seconds=5)
    attempt = 1
    while t < end - timedelta(seconds=30):
        handshake = round(ws_rng.lognormvariate(math.log(45), 0.4), 3)
        events.append({"type": "websocket", "ts": ts(t), "session": session, "phase": "open", "route": route,
                       "attempt": attempt, "duration_ms": handshake})
        opened = t
        stay = timedelta(seconds=ws_rng.uniform(40, 480))
        close_at = min(end, opened + stay)
        in_incident = INCIDENT[0] <= opened < INCIDENT[1] or INCIDENT[0] <= close_at < INCIDENT[1]
        # What ends this connection: the reader leaving (1000), the incident, the deploy, a silent peer.
        if in_incident and ws_rng.random() < 0.7:
            close_at = min(close_at, max(opened, INCIDENT[0]) + timedelta(seconds=ws_rng.uniform(5, 90)))
            code, reason, by = (1011, "server_error", "server") if ws_rng.random() < 0.55 else (1006, "abnormal", "network")
        elif opened < DEPLOY <= close_at:
            close_at, code, reason, by = DEPLOY + timedelta(milliseconds=ws_rng.randint(0, 900)), 1001, "going_away", "server"
        elif ws_rng.random() < 0.03:
            code, reason, by = 1006, "ping_timeout", "client"
        else:
            code, reason, by = 1000, "normal", "client"
        up = (close_at - opened).total_seconds()
        messages = int(up / ws_rng.uniform(4, 12))
        silence = min(up, ws_rng.uniform(4, 25)) if code != 1006 or reason != "ping_timeout" else min(up, 40 + ws_rng.uniform(0, 2))
        pings = int(up / 30)
        event = {"type": "websocket", "ts": ts(close_at), "session": session, "phase": "close", "route": route,
                 "attempt": attempt, "code": code, "reason": reason, "closed_by": by, "duration_ms": round(up * 1000, 3),
                 "messages_in": messages, "messages_out": 1 + ws_rng.randint(0, 2),
                 "bytes_in": messages * ws_rng.randint(120, 420), "bytes_out": 48 + ws_rng.randint(0, 60),
                 "pings": pings, "silence_ms": round(silence * 1000, 3)}
        if pings:
            event["ping_rtt_ms"] = round(ws_rng.lognormvariate(math.log(60), 0.3), 3)
        events.append(event)
        if code == 1000:
            # The reader left the item; maybe opens another one later in the session.
            t = close_at + timedelta(seconds=ws_rng.uniform(30, 300))
            attempt = 1
            continue
        attempt += 1
        delay = min(30000, 1000 * 2 ** (attempt - 2)) * ws_rng.uniform(0.5, 1.0)
        events.append({"type": "websocket", "ts": ts(close_at), "session": session, "phase": "reconnect", "route": route,
                       "attempt": attempt, "delay_ms": round(delay)})
        t = close_at + timedelta(milliseconds=delay)
        # During the incident some attempts are refused before one opens again.
        while INCIDENT[0] <= t < INCIDENT[1] and ws_rng.random() < 0.25 and t < end:
            events.append({"type": "websocket", "ts": ts(t), "session": session, "phase": "close", "route": route,
                           "attempt": attempt, "code": 1006, "reason": "refused", "closed_by": "network", "status": 503,
                           "duration_ms": round(ws_rng.uniform(30, 120), 3)})
            attempt += 1
            delay = min(30000, 1000 * 2 ** (attempt - 2)) * ws_rng.uniform(0.5, 1.0)
            events.append({"type": "websocket", "ts": ts(t), "session": session, "phase": "reconnect", "route": route,
                           "attempt": attempt, "delay_ms": round(delay)})
            t += timedelta(milliseconds=delay)
    return events


def session_events(start, minutes, session, version, offline_until=None):
    events = []
    t = start
    end = start + timedelta(minutes=minutes)
    weights = [r[2] for r in ROUTES]
    # The news stream: open at launch, drops now and then (more during the incident), reconnects.
    events.append({"type": "sse", "ts": ts(t), "session": session, "phase": "open", "route": "/news/stream",
                   "attempt": 1, "status": 200, "duration_ms": latency(30)})
    sse_connected_at = t
    while t < end:
        t += timedelta(seconds=rng.expovariate(1 / 6))
        offline = offline_until is not None and t < offline_until
        in_incident = INCIDENT[0] <= t < INCIDENT[1]
        method, route, _, _ = rng.choices(ROUTES, weights)[0]
        event, extra = request(t, session, method, route, version, in_incident, offline)
        events.append(event)
        events.extend(extra)
        if rng.random() < (0.06 if in_incident else 0.004):
            up = (t - sse_connected_at).total_seconds() * 1000
            events.append({"type": "sse", "ts": ts(t), "session": session, "phase": "close", "route": "/news/stream",
                           "attempt": 1, "reason": "network_error", "duration_ms": round(up, 3), "events": rng.randint(0, 40)})
            delay = rng.randint(900, 3000)
            t2 = t + timedelta(milliseconds=delay)
            events.append({"type": "sse", "ts": ts(t2), "session": session, "phase": "reconnect", "route": "/news/stream",
                           "attempt": 2, "delay_ms": delay, "last_event_id": "n-%d" % rng.randint(1000, 9999)})
            sse_connected_at = t2
    events.append({"type": "sse", "ts": ts(end), "session": session, "phase": "close", "route": "/news/stream", "attempt": 1,
                   "reason": "closed_by_client", "duration_ms": round((end - sse_connected_at).total_seconds() * 1000, 3),
                   "events": rng.randint(0, 60)})
    events.extend(live_comments(start, end, session, offline_until))
    events.sort(key=lambda e: e["ts"])
    return events


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        if name.endswith(".jsonl.gz"):
            os.remove(os.path.join(OUT, name))
    written = 0
    for producer, update_hour, (first, last) in DEVICES:
        seq = 0
        t = DAY + timedelta(hours=first - 1.5 + rng.random())
        while t < DAY + timedelta(hours=23, minutes=30):
            hour = t.hour + t.minute / 60
            if rng.random() < activity(hour) / 1.1 and first - 2 <= hour <= last + 1:
                version = "2.4.0" if update_hour is not None and hour >= update_hour else "2.3.1"
                minutes = rng.uniform(3, 25)
                session = "%016x" % rng.getrandbits(64)
                # One device rides a train at 8 o'clock: the first minutes of that launch are offline.
                offline = t + timedelta(minutes=4) if producer == "c2d81f5b" and 7.8 <= hour <= 8.6 else None
                events = session_events(t, minutes, session, version, offline)
                seq += 1
                header = {"type": "header", "format": "apitrace", "version": 1, "producer": producer, "app": "Otec",
                          "app_version": version, "host": "iPhone", "started": ts(t)}
                name = "%s-%s-%04d.jsonl.gz" % (t.strftime("%Y%m%dT%H%M%SZ"), producer, seq)
                lines = [json.dumps(header, separators=(",", ":"))] + [json.dumps(e, separators=(",", ":")) for e in events]
                with open(os.path.join(OUT, name), "wb") as out:
                    # mtime=0: the same bytes on every run.
                    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=6, mtime=0) as gz:
                        gz.write(("\n".join(lines) + "\n").encode())
                written += len(events)
                t += timedelta(minutes=minutes + rng.uniform(10, 60))
            else:
                t += timedelta(minutes=rng.uniform(15, 45))
    print("wrote %d events to %s" % (written, OUT))


main()
