import APITraceFormat
import Yams

extension AlertRules {
    /// Parses the text of a rules file (YAML or JSON); `file` names it in errors.
    package static func parse(_ text: String, file: String = "rules") throws(AlertConfigError) -> AlertRules {
        if let deep = YAMLNestingCheck.firstTooDeep(text) {
            throw AlertConfigError(file: file, line: deep.line, column: deep.column,
                                   message: "nested more than \(YAMLNestingCheck.maximumDepth) levels deep; a rules file needs a handful (rules, a rule, its windows)")
        }
        let root: Node
        do {
            // Scalars are read by their text (`ConfigNode`), never by a resolved tag: the basic resolver
            // spares every run compiling the default one's seven regular expressions (3% of a cron `alert`).
            guard let node = try Yams.compose(yaml: text, .basic) else {
                throw AlertConfigError(file: file, line: nil, message: "the rules file is empty; it needs `rules:` and `notifiers:`")
            }
            root = node
        } catch let error as AlertConfigError {
            throw error
        } catch let error as YamlError {
            throw AlertConfigError.syntax(error, file: file)
        } catch {
            throw AlertConfigError(file: file, line: nil, message: "\(error)")
        }
        let top = try ConfigNode(node: root, path: "", file: file).members(allowed: ["rules", "notifiers"])
        var notifiers: [String: NotifierConfiguration] = [:]
        if let node = top["notifiers"] {
            for (name, entry) in try node.entries() { notifiers[name] = try parseNotifier(name: name, entry) }
        }
        guard let rulesNode = top["rules"] else {
            throw AlertConfigError(file: file, line: root.mark?.line, message: "no `rules:` list; add at least one rule with a name and an slo or a spike")
        }
        var rules: [AlertRule] = []
        for item in try rulesNode.sequence() {
            let rule = try parseRule(item)
            if rules.contains(where: { $0.name == rule.name }) { throw item.error("a rule named \(rule.name) is already defined") }
            for target in rule.notify where notifiers[target] == nil {
                throw item.error("notify names \(target), which is not under `notifiers:` (defined: \(notifiers.keys.sorted().joined(separator: ", ")))")
            }
            rules.append(rule)
        }
        if rules.isEmpty { throw rulesNode.error("no rules; add at least one rule") }
        return AlertRules(rules: rules, notifiers: notifiers, path: file)
    }

    private static func parseRule(_ node: ConfigNode) throws(AlertConfigError) -> AlertRule {
        let f = try node.members(allowed: [
            "name", "scope", "failure", "slo", "burn_rate", "spike", "min_requests", "confidence", "severity",
            "notify", "repeat_interval", "resolve_after", "evidence_window", "recent_window", "latency_ms", "new_failures",
            "group_by", "max_groups", "max_group_pages",
        ])
        guard let nameNode = f["name"] else { throw node.error("a rule needs a `name`") }
        let name = try nameNode.string()
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
            throw nameNode.error("use letters, digits, '-', '_' and '.' only; found \(name)")
        }
        var rule = AlertRule(name: name, line: node.line)
        if let n = f["scope"] { rule.scope = try parseScope(n) }
        if let n = f["failure"] { rule.failure = try parseFailure(n) }
        if let n = f["slo"] {
            let slo = try n.double()
            guard slo > 0, slo < 1 else { throw n.error("must be between 0 and 1 (exclusive), e.g. 0.99; found \(n.describe())") }
            rule.slo = slo
        }
        if let n = f["burn_rate"] {
            guard rule.slo != nil else { throw n.error("burn_rate needs an `slo` on the rule") }
            rule.burnRateWindows = try n.sequence().map { (w) throws(AlertConfigError) in try parseBurnRateWindow(w) }
            if rule.burnRateWindows.isEmpty { throw n.error("give at least one window pair, or leave burn_rate out for the defaults") }
        }
        if let n = f["spike"] { rule.spike = try parseSpike(n) }
        if let n = f["recent_window"] { rule.recentWindow = try n.duration() }
        if let n = f["new_failures"] { rule.newFailures = try parseNewFailures(n) }
        if let n = f["latency_ms"] {
            let ms = try n.double()
            guard ms > 0, ms.isFinite else { throw n.error("must be a number of milliseconds above 0, e.g. 2000") }
            guard rule.slo != nil else { throw n.error("a latency rule needs an `slo`: the share of requests that must be faster, e.g. 0.95") }
            rule.latencyMs = ms
        }
        guard rule.slo != nil || rule.spike != nil || rule.newFailures != nil else {
            throw node.error("rule \(name) detects nothing; give it an `slo` (burn-rate paging), a `spike` or `new_failures`")
        }
        if let n = f["min_requests"] {
            rule.minRequests = try n.int()
            guard rule.minRequests >= 1 else { throw n.error("must be at least 1") }
        }
        if let n = f["confidence"] {
            if n.node.scalar?.string == "none" || n.node.bool == false {
                rule.confidence = nil
            } else {
                let c = try n.double()
                guard c > 0.5, c < 1 else { throw n.error("must be between 0.5 and 1, e.g. 0.95, or `none`") }
                rule.confidence = c
            }
        }
        if let n = f["severity"] {
            let text = try n.string()
            guard let s = AlertRule.Severity(rawValue: text) else {
                throw n.error("expected one of critical, error, warning, info; found \(text)")
            }
            rule.severity = s
        }
        if let n = f["notify"] {
            if n.node.scalar != nil { rule.notify = [try n.string()] } else {
                rule.notify = try n.sequence().map { (item) throws(AlertConfigError) in try item.string() }
            }
        }
        if let n = f["repeat_interval"] { rule.repeatInterval = try n.duration() }
        if let n = f["resolve_after"] { rule.resolveAfter = try n.duration() }
        if let n = f["evidence_window"] { rule.evidenceWindow = try n.duration() } else {
            rule.evidenceWindow = AlertRule(name: name, slo: rule.slo, burnRateWindows: rule.burnRateWindows, spike: rule.spike, newFailures: rule.newFailures).evidenceWindow
        }
        guard rule.recentWindow.milliseconds > 0 else { throw node.error("recent_window must be above 0") }
        try parseGroups(f, into: &rule)
        return rule
    }

    /// `group_by` (a key or a list of keys), `max_groups`, `max_group_pages`.
    private static func parseGroups(_ f: [String: ConfigNode], into rule: inout AlertRule) throws(AlertConfigError) {
        if let n = f["group_by"] {
            let items = n.node.scalar != nil ? [n] : try n.sequence()
            for item in items {
                let text = try item.string()
                guard let key = AlertGroup.Key(rawValue: text) else {
                    throw item.error("rule \(rule.name) cannot group by \(text); group keys are route, host and app_version")
                }
                guard !rule.groupBy.contains(key) else { throw item.error("rule \(rule.name) groups by \(text) twice") }
                rule.groupBy.append(key)
            }
            // One order everywhere (counting keys, labels, state): route, host, app version.
            rule.groupBy.sort { AlertGroup.Key.allCases.firstIndex(of: $0)! < AlertGroup.Key.allCases.firstIndex(of: $1)! }
            if rule.groupBy.isEmpty { throw n.error("give at least one group key (route, host, app_version), or leave group_by out") }
            if rule.newFailures != nil {
                throw n.error("rule \(rule.name): group_by does not combine with new_failures (new failures are already found per failure group); use two rules")
            }
        }
        // 1,000 groups of a 6 h rule hold about 35 MB of buckets; more is a sign of an id left in a route.
        for (field, limit) in [("max_groups", 1_000), ("max_group_pages", 1_000)] {
            guard let n = f[field] else { continue }
            guard !rule.groupBy.isEmpty else { throw n.error("\(field) needs `group_by` on the rule") }
            let value = try n.int()
            guard (1...limit).contains(value) else { throw n.error("must be between 1 and \(limit); found \(value)") }
            if field == "max_groups" { rule.maxGroups = value } else { rule.maxGroupPages = value }
        }
    }

    private static func parseNewFailures(_ node: ConfigNode) throws(AlertConfigError) -> AlertRule.NewFailureDetection {
        var d = AlertRule.NewFailureDetection()
        if node.node.scalar != nil, node.node.bool == true { return d }
        let f = try node.members(allowed: ["baseline", "window", "min_count", "min_sessions", "min_session_share", "regressed_after"])
        if let n = f["baseline"] { d.baseline = try n.duration() }
        if let n = f["window"] { d.window = try n.duration() }
        if let n = f["min_count"] { d.minCount = try n.int(); guard d.minCount >= 1 else { throw n.error("must be at least 1") } }
        if let n = f["min_sessions"] { d.minSessions = try n.int(); guard d.minSessions >= 0 else { throw n.error("must be 0 or more") } }
        if let n = f["min_session_share"] {
            d.minSessionShare = try n.double()
            guard d.minSessionShare >= 0, d.minSessionShare <= 1 else { throw n.error("must be between 0 and 1") }
        }
        if let n = f["regressed_after"] { d.regressedAfter = try n.duration() }
        guard d.window.milliseconds > 0, d.baseline.milliseconds > 0 else { throw node.error("window and baseline must be above 0") }
        return d
    }

    private static func parseScope(_ node: ConfigNode) throws(AlertConfigError) -> AlertRule.Scope {
        if node.node.scalar?.string == "all" { return .init() }
        let f = try node.members(allowed: ["route", "host", "app_version"])
        return .init(route: try f["route"]?.string(), host: try f["host"]?.string(), appVersion: try f["app_version"]?.string())
    }

    private static func parseFailure(_ node: ConfigNode) throws(AlertConfigError) -> AlertRule.FailureDefinition {
        let f = try node.members(allowed: ["statuses", "transport", "decode_failures", "include_errors", "exclude_errors", "websocket_closes"])
        var definition = AlertRule.FailureDefinition()
        if let n = f["statuses"] {
            definition.statuses = try n.sequence().map { (item) throws(AlertConfigError) in
                let text = try item.string().lowercased()
                // Every status a trace can hold (100 to 999): the default, 500-999, must be writable.
                let valid = RequestOutcome.traceStatuses
                if text.count == 3, text.hasSuffix("xx"), let d = Int(text.prefix(1)), (1...9).contains(d) { return (d * 100)...(d * 100 + 99) }
                if let single = Int(text), valid.contains(single) { return single...single }
                let parts = text.split(separator: "-")
                if parts.count == 2, let a = Int(parts[0]), let b = Int(parts[1]), a <= b, valid.contains(a), valid.contains(b) { return a...b }
                throw item.error("expected a status (503), a class (5xx) or a range (500-999), from 100 to 999; found \(text)")
            }
        }
        if let n = f["transport"] { definition.transport = try n.bool() }
        if let n = f["decode_failures"] { definition.decodeFailures = try n.bool() }
        if let n = f["include_errors"] { definition.includeErrors = try n.sequence().map { (item) throws(AlertConfigError) in try item.string() } }
        if let n = f["exclude_errors"] { definition.excludeErrors = try n.sequence().map { (item) throws(AlertConfigError) in try item.string() } }
        if let n = f["websocket_closes"] { definition.webSocketCloses = try n.bool() }
        return definition
    }

    private static func parseBurnRateWindow(_ node: ConfigNode) throws(AlertConfigError) -> AlertRule.BurnRateWindow {
        let f = try node.members(allowed: ["long", "short", "factor"])
        guard let long = f["long"], let short = f["short"], let factor = f["factor"] else {
            throw node.error("a window pair needs `long`, `short` and `factor`, e.g. {long: 1h, short: 5m, factor: 14.4}")
        }
        let window = AlertRule.BurnRateWindow(long: try long.duration(), short: try short.duration(), factor: try factor.double())
        guard window.short <= window.long else { throw short.error("the short window must not be longer than the long one (\(window.long))") }
        guard window.factor > 0 else { throw factor.error("must be above 0") }
        return window
    }

    private static func parseSpike(_ node: ConfigNode) throws(AlertConfigError) -> AlertRule.SpikeDetection {
        var spike = AlertRule.SpikeDetection()
        if node.node.bool == true { return spike }
        let f = try node.members(allowed: ["window", "baseline", "factor", "min_increase"])
        if let n = f["window"] { spike.window = try n.duration() }
        if let n = f["baseline"] {
            let text = try n.string()
            guard let b = AlertRule.SpikeDetection.Baseline(rawValue: text) else {
                throw n.error("expected same_hour_of_week or trailing_day; found \(text)")
            }
            spike.baseline = b
        }
        if let n = f["factor"] {
            spike.factor = try n.double()
            guard spike.factor > 1 else { throw n.error("must be above 1, e.g. 3") }
        }
        if let n = f["min_increase"] {
            spike.minIncrease = try n.double()
            guard spike.minIncrease >= 0, spike.minIncrease < 1 else { throw n.error("must be a ratio between 0 and 1, e.g. 0.02") }
        }
        return spike
    }

    private static func parseNotifier(name: String, _ node: ConfigNode) throws(AlertConfigError) -> NotifierConfiguration {
        let f = try node.members(allowed: ["type", "url", "url_env", "webhook_url_env", "routing_key_env", "command", "send_resolved", "max_attempts", "ends_after", "timeout"])
        guard let typeNode = f["type"] else { throw node.error("a notifier needs a `type`: pagerduty, slack, webhook, command or alertmanager") }
        let typeText = try typeNode.string()
        guard let kind = NotifierConfiguration.Kind(rawValue: typeText) else {
            throw typeNode.error("expected pagerduty, slack, webhook, command or alertmanager; found \(typeText)")
        }
        var n = NotifierConfiguration(name: name, kind: kind, line: node.line)
        n.url = try f["url"]?.string()
        n.urlEnvironmentVariable = try (f["webhook_url_env"] ?? f["url_env"])?.string()
        n.routingKeyEnvironmentVariable = try f["routing_key_env"]?.string()
        n.command = try f["command"]?.string()
        if let b = f["send_resolved"] { n.sendResolved = try b.bool() }
        if let m = f["max_attempts"] {
            n.maxAttempts = try m.int()
            guard (1...10).contains(n.maxAttempts) else { throw m.error("must be between 1 and 10") }
        }
        if let t = f["timeout"] {
            let timeout = try t.duration()
            guard (1000...600_000).contains(timeout.milliseconds) else { throw t.error("must be between 1s and 10m") }
            n.timeout = timeout
        }
        if let e = f["ends_after"] {
            guard kind == .alertmanager else { throw e.error("ends_after is for alertmanager notifiers") }
            n.endsAfter = try e.duration()
            guard n.endsAfter.milliseconds >= 60_000 else { throw e.error("must be at least 1m (apitrace re-sends the alert on every run)") }
        }
        if let url = n.url, let urlNode = f["url"] {
            guard url.hasPrefix("https://") || url.hasPrefix("http://") else { throw urlNode.error("expected an http:// or https:// URL") }
        }
        switch kind {
        case .pagerduty:
            guard n.routingKeyEnvironmentVariable != nil else {
                throw node.error("a pagerduty notifier needs `routing_key_env`: the environment variable holding the routing key")
            }
            if n.url == nil, n.urlEnvironmentVariable == nil { n.url = NotifierConfiguration.pagerDutyEventsURL }
        case .slack, .webhook:
            guard n.url != nil || n.urlEnvironmentVariable != nil else {
                throw node.error("a \(kind.rawValue) notifier needs `webhook_url_env` (the environment variable holding the URL) or `url`")
            }
        case .command:
            guard let command = n.command, !command.isEmpty else { throw node.error("a command notifier needs `command`") }
        case .alertmanager:
            guard n.url != nil || n.urlEnvironmentVariable != nil else {
                throw node.error("an alertmanager notifier needs `url`, e.g. http://127.0.0.1:9093 (or `url_env`)")
            }
        }
        return n
    }
}

extension AlertConfigError {
    static func syntax(_ error: YamlError, file: String) -> AlertConfigError {
        switch error {
        case let .scanner(context, problem, mark, _), let .parser(context, problem, mark, _), let .composer(context, problem, mark, _):
            let detail = context.map { "\(problem) \($0.text)" } ?? problem
            return AlertConfigError(file: file, line: mark.line, column: mark.column, message: "invalid YAML: \(detail)")
        case let .reader(problem, offset, _, _):
            return AlertConfigError(file: file, line: nil, message: "invalid text\(offset.map { " at byte \($0)" } ?? ""): \(problem)")
        default:
            return AlertConfigError(file: file, line: nil, message: "invalid YAML: \(error)")
        }
    }
}
