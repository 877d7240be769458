import APITraceFormat
import Foundation

/// The per-file half of ``WindowedFailureCounter``: rules turned into byte patterns, and the line loop.
struct ScanPlan: Sendable {
    struct RulePattern: Sendable {
        var route: [UInt8]?
        var routeIsPrefix = false
        var host: [UInt8]?
        var appVersion: String?
        var failure: AlertRule.FailureDefinition
        var evidence: Range<Int64>?

        @inline(__always) func matches(_ pattern: [UInt8]?, prefix: Bool, _ value: UnsafeRawBufferPointer?) -> Bool {
            guard let pattern else { return true }
            guard let value else { return false }
            if prefix ? value.count < pattern.count : value.count != pattern.count { return false }
            return pattern.withUnsafeBytes { memcmp($0.baseAddress!, value.baseAddress!, pattern.count) == 0 }
        }
    }

    let patterns: [RulePattern]
    let ranges: [Range<Int64>]
    let span: Range<Int64>
    let bucket: Int64

    init(counter: WindowedFailureCounter) {
        patterns = zip(counter.rules, counter.evidenceRanges).map { rule, evidence in
            var p = RulePattern(failure: rule.failure, evidence: evidence)
            if var route = rule.scope.route {
                if route.hasSuffix("*") { p.routeIsPrefix = true; route.removeLast() }
                p.route = Array(route.utf8)
            }
            p.host = rule.scope.host.map { Array($0.utf8) }
            p.appVersion = rule.scope.appVersion
            return p
        }
        ranges = counter.ranges
        span = (ranges.map(\.lowerBound).min() ?? 0)..<(ranges.map(\.upperBound).max() ?? 0)
        bucket = counter.bucketMilliseconds
    }

    private struct BadTimestamp: Error {}

    struct FileCounts: Sendable {
        var runs: [BucketRun]
        var evidence: [EvidenceTally]
        var lines = 0
        var warnings: [TraceReadWarning] = []
        var fromCache = false
    }

    /// The fields of one event line that alerting reads.
    private struct Fields {
        var kind = 0  // 1 request, 2 decode_failure, 3 error
        var ts: Int64 = 0
        var route: UnsafeRawBufferPointer?
        var host: UnsafeRawBufferPointer?
        var status: Int?
        var error: UnsafeRawBufferPointer?
        var sampleRate: Double?
        var path: UnsafeRawBufferPointer?
        var entity: UnsafeRawBufferPointer?
        var identity: UnsafeRawBufferPointer?
    }

    func scan(_ reader: TraceFileReader) -> FileCounts {
        var out = FileCounts(runs: Array(repeating: BucketRun(), count: patterns.count), evidence: Array(repeating: EvidenceTally(), count: patterns.count))
        var active = [Bool](repeating: true, count: patterns.count)
        var sawHeader = false
        var invalid = 0
        let raw = reader.forEachRawLine { line, number in
            if line.isEmpty { return true }
            if !sawHeader {
                guard number == 1, case .header(let header)? = try? TraceLine.decode(line), header.version <= TraceFileHeader.currentVersion else {
                    out.warnings.append(.init(path: reader.path, kind: .notATraceFile("line 1 is not an apitrace header of a version this reader knows"), eventsKept: 0))
                    return false
                }
                sawHeader = true
                for i in patterns.indices where patterns[i].appVersion != nil {
                    active[i] = patterns[i].appVersion == header.appVersion
                }
                return active.contains(true)
            }
            out.lines += 1
            do {
                guard let f = try Self.read(line, span: span) else { return true }
                guard ranges.count == 1 || ranges.contains(where: { $0.contains(f.ts) }) else { return true }
                count(f, active: active, into: &out)
            } catch {
                invalid += 1
            }
            return true
        }
        if let problem = raw.problem, sawHeader { out.warnings.append(problem) }
        if invalid > 0 {
            out.warnings.append(.init(path: reader.path, kind: .invalidLine(line: 0, reason: "\(invalid) lines were not valid trace lines and were not counted"), eventsKept: out.lines - invalid))
        }
        return out
    }

    @inline(__always) private func count(_ f: Fields, active: [Bool], into out: inout FileCounts) {
        let b = f.ts >= 0 ? f.ts / bucket : (f.ts - bucket + 1) / bucket
        for i in patterns.indices where active[i] {
            let p = patterns[i]
            guard p.matches(p.route, prefix: p.routeIsPrefix, f.route), p.matches(p.host, prefix: false, f.host) else { continue }
            let inEvidence = p.evidence?.contains(f.ts) ?? false
            switch f.kind {
            case 1:
                let failed = p.failure.isFailure(status: f.status)
                let weight = failed ? 1 : 1 / (f.sampleRate.map { $0 > 0 && $0 <= 1 ? $0 : 1 } ?? 1)
                out.runs[i].add(bucket: b, requests: weight, failures: failed ? 1 : 0)
                if inEvidence, let route = f.route {
                    let key = String(decoding: route, as: UTF8.self)
                    var t = out.evidence[i].routes[key] ?? WindowTotals(requests: 0, failures: 0)
                    t.requests += weight
                    if failed { t.failures += 1 }
                    out.evidence[i].routes[key] = t
                    if failed {
                        let identity = f.error.map { String(decoding: $0, as: UTF8.self) } ?? f.status.map { "HTTP \($0)" } ?? "transport failure"
                        out.evidence[i].errorIdentities[identity, default: 0] += 1
                    }
                }
            case 2:
                if p.failure.decodeFailures { out.runs[i].add(bucket: b, requests: 0, failures: 1) }
                if inEvidence {
                    let entity = f.entity.map { String(decoding: $0, as: UTF8.self) } ?? "?"
                    let path = f.path.map { TraceEvent.DecodeFailure.foldIndices(String(decoding: $0, as: UTF8.self)) } ?? "(no path)"
                    out.evidence[i].decodePaths["\(entity) \(path)", default: 0] += 1
                }
            default:
                if inEvidence, let identity = f.identity {
                    out.evidence[i].errorIdentities[String(decoding: identity, as: UTF8.self), default: 0] += 1
                }
            }
        }
    }

    /// Reads the fields alerting needs; nil for event types it ignores or instants outside `span`.
    private static func read(_ line: UnsafeRawBufferPointer, span: Range<Int64>) throws -> Fields? {
        var s = JSONScanner(line)
        var f = Fields()
        var sawTS = false
        try s.beginObject()
        while let key = try s.nextKey() {
            if s.consumeNull() { continue }
            switch key.count {
            case 4 where key.equals("type"):
                let raw = try s.readRawString().bytes
                if raw.equals("request") { f.kind = 1 } else if raw.equals("decode_failure") { f.kind = 2 } else if raw.equals("error") { f.kind = 3 } else { return nil }
            case 2 where key.equals("ts"):
                let raw = try s.readRawString().bytes
                guard let ts = TraceTimestamp.parse(raw) else { throw BadTimestamp() }
                guard span.contains(ts.millisecondsSince1970) else { return nil }
                f.ts = ts.millisecondsSince1970
                sawTS = true
            case 5 where key.equals("route"): f.route = try s.readRawString().bytes
            case 4 where key.equals("host"): f.host = try s.readRawString().bytes
            case 6 where key.equals("status"): f.status = Int(try s.readInt())
            case 5 where key.equals("error"): f.error = try s.readRawString().bytes
            case 11 where key.equals("sample_rate"): f.sampleRate = try s.readDouble()
            case 4 where key.equals("path"): f.path = try s.readRawString().bytes
            case 6 where key.equals("entity"): f.entity = try s.readRawString().bytes
            case 8 where key.equals("identity"): f.identity = try s.readRawString().bytes
            default: try s.skipValue()
            }
        }
        guard f.kind != 0, sawTS else { return nil }
        return f
    }
}
