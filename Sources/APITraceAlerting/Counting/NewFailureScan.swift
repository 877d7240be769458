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

    private struct Group: Sendable {
        var kind: String
        var baselineVersions: Set<String> = []
        var baselineLast: Int64 = .min
        var recentCount = 0
        /// Events of the group, in the baseline and the window.
        var events: Int64 = 0
        var recentSessions: Set<String> = []
        var recentVersions: Set<String> = []
        var firstRecent: Int64 = .max
        var examplePath: String?
        var exampleMessage: String?

        mutating func merge(_ other: Group) {
            baselineVersions.formUnion(other.baselineVersions)
            baselineLast = max(baselineLast, other.baselineLast)
            recentCount += other.recentCount
            events = events.addingSaturated(other.events)
            for s in other.recentSessions where recentSessions.count < NewFailureScan.maximumSessions { recentSessions.insert(s) }
            recentVersions.formUnion(other.recentVersions)
            if other.firstRecent < firstRecent {
                (firstRecent, examplePath, exampleMessage) = (other.firstRecent, other.examplePath, other.exampleMessage)
            }
        }
    }

    /// What one file adds: its groups in first-seen order, and the sessions active in the window.
    private struct FileGroups: Sendable {
        var order: [String] = []
        var groups: [String: Group] = [:]
        /// Events of groups past the bound.
        var leftOut: Int64 = 0
        var windowSessions: Set<String> = []
        var warnings: [TraceReadWarning] = []
        var fromCache = false

        mutating func add(_ key: String, isDecodeFailure: Bool, events: Int64 = 1, _ change: (inout Group) -> Void) {
            if groups[key] == nil {
                guard groups.count < NewFailureScan.maximumGroups else { leftOut = leftOut.addingSaturated(events); return }
                order.append(key)
                groups[key] = Group(kind: isDecodeFailure ? "decode_failure" : "error")
            }
            change(&groups[key]!)
            groups[key]!.events = groups[key]!.events.addingSaturated(events)
        }
    }

    struct Result {
        var failures: [NewFailure] = []
        var warnings: [TraceReadWarning] = []
        /// Finished baseline files judged from their cached summary, not read.
        var filesFromCache = 0
    }

    /// What identifies a file's ``FileFailureGroups`` in the cache: the rule's route scope
    /// (its app-version scope is applied when the summary is used).
    var cacheSignature: String { "new-failures-1\u{1}\(scope.route ?? "")" }

    /// Judges the failures under `paths` at `now`, reading files in parallel. With a `cache`, a
    /// finished file whose events all lie in the baseline is taken from its cached summary (read
    /// and stored on a miss).
    func scan(paths: [String], at now: Int64, cache: FileCountCache? = nil) -> Result {
        let windowStart = now - detection.window.milliseconds
        let baselineStart = windowStart - detection.baseline.milliseconds
        let files = TraceFileSelection.plan(TraceFileDiscovery.find(paths).files, overlapping: [baselineStart..<now])
        let cacheable = Set(files.filter(\.isCacheable).map(\.path))
        let route = scope.route.map { TextPattern($0) }
        // A finished file first read while in the window is read twice that once (its summary serves
        // the runs after it has aged into the baseline); later runs read it once, as without a cache.
        let perFile = ParallelTraceReader.map(files.map(\.path)) { reader in
            if let cache, cacheable.contains(reader.path), let summary = cachedSummary(reader.path, route: route, cache: cache),
               summary.lies(in: baselineStart..<windowStart) {
                var out = FileGroups(fromCache: true)
                guard scope.appVersion == nil || scope.appVersion == summary.appVersion else { return out }
                for g in summary.groups {
                    out.add(g.key, isDecodeFailure: g.isDecodeFailure, events: g.count) { group in
                        group.baselineVersions.insert(summary.appVersion)
                        group.baselineLast = max(group.baselineLast, g.last)
                    }
                }
                return out
            }
            return read(reader, route: route, baseline: baselineStart..<windowStart, window: windowStart..<now)
        }
        var groups: [String: Group] = [:]
        var windowSessions: Set<String> = []
        var result = Result()
        var groupsLeftOut: Int64 = 0
        for file in perFile {
            result.warnings += file.warnings
            if file.fromCache { result.filesFromCache += 1 }
            groupsLeftOut = groupsLeftOut.addingSaturated(file.leftOut)
            for s in file.windowSessions where windowSessions.count < Self.maximumSessions * 10 { windowSessions.insert(s) }
            for key in file.order {
                if groups[key] == nil {
                    guard groups.count < Self.maximumGroups else { groupsLeftOut = groupsLeftOut.addingSaturated(file.groups[key]!.events); continue }
                    groups[key] = file.groups[key]!
                } else {
                    groups[key]!.merge(file.groups[key]!)
                }
            }
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

    /// Reads one file's failures in the baseline and the window.
    private func read(_ reader: TraceFileReader, route: TextPattern?, baseline: Range<Int64>, window: Range<Int64>) -> FileGroups {
        var out = FileGroups()
        var version = ""
        let scan = reader.forEachRecord(header: { header in
            version = header.appVersion ?? ""
            return scope.appVersion == nil || scope.appVersion == header.appVersion
        }) { r, _ in
            let ts = r.timestamp
            let recent = window.contains(ts)
            guard recent || baseline.contains(ts) else { return true }
            if recent, let s = r.session, out.windowSessions.count < Self.maximumSessions * 10 { out.windowSessions.insert(s.string) }
            if let route, !(r.route.map { route.matches($0.string) } ?? false) { return true }
            guard let (key, isDecodeFailure) = FileFailureGroups.key(of: r) else { return true }
            out.add(key, isDecodeFailure: isDecodeFailure) { g in
                if recent {
                    g.recentCount += 1
                    if let s = r.session, g.recentSessions.count < Self.maximumSessions { g.recentSessions.insert(s.string) }
                    g.recentVersions.insert(version)
                    if ts < g.firstRecent {
                        (g.firstRecent, g.examplePath, g.exampleMessage) = (ts, r.path?.string, r.message?.string)
                    }
                } else {
                    g.baselineVersions.insert(version)
                    g.baselineLast = max(g.baselineLast, ts)
                }
            }
            return true
        }
        out.warnings = scan.warnings
        return out
    }

    /// The cached (or, on a miss, freshly read and stored) summary of a cacheable file; nil when it
    /// has no usable summary.
    private func cachedSummary(_ path: String, route: TextPattern?, cache: FileCountCache) -> FileFailureGroups? {
        guard let status = FileStatus(path: path) else { return nil }
        if let summary = cache.failureGroups(for: path, status: status, signature: cacheSignature) { return summary }
        guard let summary = FileFailureGroups.read(TraceFileReader(path: path), route: route, maximumGroups: Self.maximumGroups) else { return nil }
        cache.store(summary, for: path, status: status, signature: cacheSignature)
        return summary
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
