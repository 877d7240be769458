import APITraceFormat

/// Adds a rule's ``AlertRule/NewFailureDetection`` to its detection: the rule fires when the
/// ratio detection fires or a new or regressed failure is found.
enum NewFailureDetector {
    static func evaluate(_ rule: AlertRule, _ detection: Detection, paths: [String], at now: Int64, cache: FileCountCache?) -> (Detection, [TraceReadWarning]) {
        guard let newFailures = rule.newFailures else { return (detection, []) }
        let found = NewFailureScan(detection: newFailures, scope: rule.scope).scan(paths: paths, at: now, cache: cache)
        var d = detection
        d.newFailures = found.failures
        d.firing = d.firing || !found.failures.isEmpty
        return (d, found.warnings)
    }
}
