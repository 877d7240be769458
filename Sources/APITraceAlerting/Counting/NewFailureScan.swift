import APITraceFormat
import Foundation

/// Reads the traces a ``AlertRule/NewFailureDetection`` needs at one instant — its baseline and
/// its window — through the format's one reading loop, and names the failures that are new or
/// regressed. Memory is bounded: at most ``maximumGroups`` groups and ``maximumSessions`` sessions
/// per group are tracked.
struct NewFailureScan {
    let detection: AlertRule.NewFailureDetection
    let scope: AlertRule.Scope

    static let maximumGroups = 5000
    static let maximumSessions = 10_000

    private struct Group {
        var kind: String
        var baselineVersions: Set<String> = []
        var baselineLast: Int64 = .min
        var recentCount = 0
        var recentSessions: Set<String> = []
        var recentVersions: Set<String> = []
        var firstRecent: Int64 = .max
        var examplePath: String?
        var exampleMessage: String?
    }

    struct Result {
        var failures: [NewFailure] = []
        var warnings: [TraceReadWarning] = []
    }

    func scan(paths: [String], at now: Int64) -> Result {
        let windowStart = now - detection.window.milliseconds
        let baselineStart = windowStart - detection.baseline.milliseconds
        let files = TraceFileSelection.select(TraceFileDiscovery.find(paths).files, overlapping: [baselineStart..<now])
        var groups: [String: Group] = [:]
        var windowSessions: Set<String> = []
        var result = Result()
        let route = scope.route.map { TextPattern($0) }
        var groupsLeftOut = 0
        for path in files {
            var version = ""
            let scan = TraceFileReader(path: path).forEachRecord(header: { header in
                version = header.appVersion ?? ""
                return scope.appVersion == nil || scope.appVersion == header.appVersion
            }) { r, _ in
                let ts = r.timestamp
                guard ts >= baselineStart, ts < now else { return true }
                let recent = ts >= windowStart
                if recent, let s = r.session, windowSessions.count < Self.maximumSessions * 10 { windowSessions.insert(s.string) }
                if let route, !(r.route.map { route.matches($0.string) } ?? false) { return true }
                let key: String, kind: String
                switch r.kind {
                case .decodeFailure:
                    kind = "decode_failure"
                    key = "\(r.entity!.string) \(r.failureKind!.string) \(TraceEvent.DecodeFailure.foldIndices(r.path?.string ?? ""))"
                case .error:
                    kind = "error"
                    key = r.identity!.string
                default:
                    return true
                }
                if groups[key] == nil {
                    guard groups.count < Self.maximumGroups else { groupsLeftOut += 1; return true }
                    groups[key] = Group(kind: kind)
                }
                if recent {
                    groups[key]!.recentCount += 1
                    if let s = r.session, groups[key]!.recentSessions.count < Self.maximumSessions { groups[key]!.recentSessions.insert(s.string) }
                    groups[key]!.recentVersions.insert(version)
                    if ts < groups[key]!.firstRecent {
                        groups[key]!.firstRecent = ts
                        groups[key]!.examplePath = r.path?.string
                        groups[key]!.exampleMessage = r.message?.string
                    }
                } else {
                    groups[key]!.baselineVersions.insert(version)
                    groups[key]!.baselineLast = max(groups[key]!.baselineLast, ts)
                }
                return true
            }
            result.warnings += scan.warnings
        }
        if groupsLeftOut > 0 {
            // Never silent: past the bound, failures of groups not yet seen are counted and said.
            result.warnings.append(.init(path: paths.joined(separator: ", "), kind: .limitReached("new_failures tracks at most \(Self.maximumGroups) failure groups; \(groupsLeftOut) events of further groups were not judged"), eventsKept: 0))
        }
        let activeSessions = max(1, windowSessions.count)
        for (key, g) in groups where g.recentCount >= detection.minCount {
            let sessions = g.recentSessions.count
            guard sessions >= detection.minSessions, Double(sessions) / Double(activeSessions) >= detection.minSessionShare else { continue }
            var regressed = false
            if g.baselineLast != .min {
                // Seen before: only a return after a quiet spell, in a version newer than any it was seen in, pages.
                guard g.baselineLast < windowStart - detection.regressedAfter.milliseconds,
                      let newest = g.baselineVersions.max(by: Self.versionLess),
                      g.recentVersions.contains(where: { Self.versionLess(newest, $0) }) else { continue }
                regressed = true
            }
            result.failures.append(NewFailure(
                kind: g.kind, group: key, regressed: regressed, appVersions: g.recentVersions.sorted(by: Self.versionLess),
                firstSeen: TraceTimestamp(millisecondsSince1970: g.firstRecent).rfc3339, count: g.recentCount, sessions: sessions,
                examplePath: g.examplePath, exampleMessage: g.exampleMessage))
        }
        result.failures.sort { ($0.sessions, $0.count, $0.group) > ($1.sessions, $1.count, $1.group) }
        return result
    }

    /// Orders app versions by their numeric dot components (`2.10` after `2.9`), then as text.
    static func versionLess(_ a: String, _ b: String) -> Bool {
        let pa = a.split(separator: ".").map { Int($0) }, pb = b.split(separator: ".").map { Int($0) }
        for (x, y) in zip(pa, pb) where x != y {
            if let x, let y { return x < y }
            return a < b
        }
        return pa.count != pb.count ? pa.count < pb.count : a < b
    }
}
