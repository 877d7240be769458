package import APITraceFormat

/// One named rule of a rules file: which traffic it watches, what counts as a failure, how a
/// spike is detected, and whom to page.
///
/// A rule pages when any of its detections fires: the multi-window burn rate against ``slo``
/// (when set) or the ``spike`` against the traffic's own baseline (when set).
package struct AlertRule: Sendable, Equatable {
    /// The rule's name, unique in the file; used in pages, the state and `apitrace mute --rule`.
    package var name: String
    /// The traffic the rule watches.
    package var scope: Scope
    /// What counts as a failed request.
    package var failure: FailureDefinition
    /// The success objective, e.g. `0.99`; enables burn-rate detection with ``burnRateWindows``.
    package var slo: Double?
    /// Burn-rate window pairs; both windows of a pair must burn faster than its factor.
    package var burnRateWindows: [BurnRateWindow]
    /// Detection against the traffic's own baseline, when set.
    package var spike: SpikeDetection?
    /// Every detection also needs the failure ratio of this most recent window above its
    /// threshold, so a detection stops within minutes of recovery instead of when its long windows
    /// drain, and an incident resolves ``resolveAfter`` later; default 3 m.
    package var recentWindow: AlertDuration
    /// Pages when a failure appears that the baseline has not seen, or regresses in a newer version.
    package var newFailures: NewFailureDetection?
    /// For a latency rule: a request slower than this (milliseconds) is a bad event against ``slo``,
    /// whatever its status; `nil` for an error rule.
    package var latencyMs: Double?
    /// Fewer requests than this in a window and that window never fires.
    package var minRequests: Int
    /// Confidence of the Wilson lower bound the failure ratio must clear (`nil`: no check).
    package var confidence: Double?
    /// Severity sent with pages (`critical`, `error`, `warning`, `info`).
    package var severity: Severity
    /// Names of notifiers (keys of the file's `notifiers`) to page.
    package var notify: [String]
    /// A firing incident pages again after this long.
    package var repeatInterval: AlertDuration
    /// An incident resolves after its rate stayed below the thresholds this long.
    package var resolveAfter: AlertDuration
    /// The window whose failures are listed as evidence in a page.
    package var evidenceWindow: AlertDuration
    /// Line of the rule in the rules file, for messages.
    package var line: Int?
    /// The keys the rule fans out over (`group_by`): each group is evaluated and paged on its own;
    /// empty for a rule over its whole scope.
    package var groupBy: [AlertGroup.Key] = []
    /// Most groups of a grouped rule with counts of their own; the rest are counted together as
    /// the `(other)` group (``AlertGroup/isOther``) and reported. Default 100.
    package var maxGroups = 100
    /// Most groups of a grouped rule that page on their own at once: when more fire together, one
    /// rule-level summary page covers them all until they are quiet. Default 3.
    package var maxGroupPages = 3
    /// For evidence: count only the traffic of this group of the rule (nil: all of it).
    package var onlyGroup: AlertGroup?

    /// Creates a rule; every detail but the name has the documented default.
    package init(
        name: String, scope: Scope = .init(), failure: FailureDefinition = .init(), slo: Double? = nil,
        burnRateWindows: [BurnRateWindow] = BurnRateWindow.defaults, spike: SpikeDetection? = nil,
        recentWindow: AlertDuration = .minutes(3), latencyMs: Double? = nil, newFailures: NewFailureDetection? = nil,
        minRequests: Int = 20, confidence: Double? = 0.95, severity: Severity = .critical, notify: [String] = [],
        repeatInterval: AlertDuration = .hours(4), resolveAfter: AlertDuration = .minutes(10),
        evidenceWindow: AlertDuration? = nil, line: Int? = nil
    ) {
        self.recentWindow = recentWindow
        self.newFailures = newFailures
        self.latencyMs = latencyMs
        self.name = name
        self.scope = scope
        self.failure = failure
        self.slo = slo
        self.burnRateWindows = burnRateWindows
        self.spike = spike
        self.minRequests = minRequests
        self.confidence = confidence
        self.severity = severity
        self.notify = notify
        self.repeatInterval = repeatInterval
        self.resolveAfter = resolveAfter
        self.evidenceWindow = evidenceWindow ?? (slo != nil ? burnRateWindows.map(\.long).min() : spike?.window ?? newFailures?.window) ?? .hours(1)
        self.line = line
    }

    /// Severity of a page, as PagerDuty names them.
    package enum Severity: String, Sendable, Codable, CaseIterable {
        case critical, error, warning, info
    }
}

extension AlertRule {
    /// The traffic a rule watches: everything, or requests matching every field that is set.
    ///
    /// `route` and `host` are patterns in the one grammar of every command's `--route` and `--host`
    /// (`TextPattern`): `*` matches any run of characters, anywhere (`/apps/*/reviews`,
    /// `*.example.com`); without one the value must match exactly. Events without the field (a
    /// decode failure has no host) match only an unset field.
    package struct Scope: Sendable, Equatable, Codable, CustomStringConvertible {
        /// Route template, e.g. `/apps/{id}`, or a pattern: `*` matches any run of characters (`/apps/*`).
        package var route: String?
        /// Server host, or a pattern (`*.example.com`).
        package var host: String?
        /// App version from the trace files' headers.
        package var appVersion: String?

        /// Creates a scope; no fields set means all traffic.
        package init(route: String? = nil, host: String? = nil, appVersion: String? = nil) {
            self.route = route
            self.host = host
            self.appVersion = appVersion
        }

        /// True when the scope watches all traffic.
        package var isAll: Bool { route == nil && host == nil && appVersion == nil }

        /// `all`, or the fields set, e.g. `route=/apps/{id} host=api.example.com`.
        package var description: String {
            if isAll { return "all" }
            return [route.map { "route=\($0)" }, host.map { "host=\($0)" }, appVersion.map { "app_version=\($0)" }]
                .compactMap { $0 }.joined(separator: " ")
        }
    }

    /// What counts as a failed request, on top of the format's one classification (``RequestOutcome``).
    ///
    /// By default a failed status (`RequestOutcome.failedStatuses`: 500 to 999, the readers'
    /// `server_error`) and transport failures fail; client-side outcomes (the app cancelled, the
    /// device was offline) are left out of the ratio entirely, neither failures nor requests.
    package struct FailureDefinition: Sendable, Equatable, Codable {
        /// HTTP statuses that count as failures; default `RequestOutcome.failedStatuses` (500-999).
        package var statuses: [ClosedRange<Int>]
        /// Whether a request whose transport failed (no status, not client-side) is a failure; default true.
        package var transport: Bool
        /// Whether a `decode_failure` event counts as a failed request; default false.
        package var decodeFailures: Bool
        /// Error identities (globs, `URLError.*`) of requests without a status that fail even when
        /// client-side, e.g. `URLError.notConnectedToInternet` for an app that must work offline-first.
        package var includeErrors: [String]
        /// Error identities (globs) of requests without a status that never fail nor count.
        package var excludeErrors: [String]
        /// Watch WebSocket connections instead of requests (`websocket_closes: true`): every `close`
        /// of a `websocket` event counts (`min_requests` is then a minimum of closes) and the
        /// abnormal ones fail: any code but 1000 and 1001, as the report counts them. Requests and
        /// decode failures are left out; the other fields of the definition do not apply.
        package var webSocketCloses = false

        /// Creates a definition; the defaults are the failed statuses (500-999) and transport failures.
        package init(
            statuses: [ClosedRange<Int>] = [RequestOutcome.failedStatuses], transport: Bool = true, decodeFailures: Bool = false,
            includeErrors: [String] = [], excludeErrors: [String] = []
        ) {
            self.statuses = statuses
            self.transport = transport
            self.decodeFailures = decodeFailures
            self.includeErrors = includeErrors
            self.excludeErrors = excludeErrors
        }

        /// The verdict on one request: `nil` when it is left out (client-side, excluded),
        /// else whether it failed.
        package func verdict(status: Int?, error: String?) -> Bool? {
            let matcher = Matcher(self)
            if var text = error, status == nil {
                let outcome = RequestOutcome.of(status: nil, error: text)
                return text.withUTF8 { matcher.verdict(status: nil, outcome: outcome, error: UnsafeRawBufferPointer($0)) }
            }
            return matcher.verdict(status: status, outcome: RequestOutcome.of(status: status, error: error), error: nil)
        }

        /// True when a request with this status (nil: transport failure) failed.
        package func isFailure(status: Int?) -> Bool { verdict(status: status, error: nil) ?? false }

        private enum CodingKeys: String, CodingKey {
            case statuses, transport, decodeFailures, includeErrors, excludeErrors, webSocketCloses
        }

        package init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            statuses = try c.decode([ClosedRange<Int>].self, forKey: .statuses)
            transport = try c.decode(Bool.self, forKey: .transport)
            decodeFailures = try c.decode(Bool.self, forKey: .decodeFailures)
            includeErrors = try c.decode([String].self, forKey: .includeErrors)
            excludeErrors = try c.decode([String].self, forKey: .excludeErrors)
            // Definitions encoded before WebSocket rules existed watch requests.
            webSocketCloses = try c.decodeIfPresent(Bool.self, forKey: .webSocketCloses) ?? false
        }

        /// The definition with its error globs compiled, for the counting loop.
        package struct Matcher: Sendable {
            let statuses: [ClosedRange<Int>]
            let transport: Bool
            let include: [TextPattern]
            let exclude: [TextPattern]

            package init(_ definition: FailureDefinition) {
                statuses = definition.statuses
                transport = definition.transport
                include = definition.includeErrors.map { TextPattern($0) }
                exclude = definition.excludeErrors.map { TextPattern($0) }
            }

            /// `nil`: left out of the ratio; else whether the request failed.
            @inline(__always)
            package func verdict(status: Int?, outcome: RequestOutcome, error: UnsafeRawBufferPointer?) -> Bool? {
                if let status { return statuses.contains { $0.contains(status) } }
                if let error, !include.isEmpty || !exclude.isEmpty {
                    if include.contains(where: { $0.matches(error) }) { return true }
                    if exclude.contains(where: { $0.matches(error) }) { return nil }
                }
                if outcome.isClientSide { return nil }
                return transport
            }
        }
    }
}
