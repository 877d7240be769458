import APITraceCapture
import APITraceFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension EventSource {
    /// How one connection attempt ended.
    enum ConnectionOutcome {
        /// The connection dropped (end of stream, network error, idle timeout, a refused redirect, a
        /// line or event past the limits), after being open for `openFor` (`nil` when it never opened,
        /// or broke a limit: such a connection never counts as healthy): reconnect.
        case dropped(openFor: Duration?)
        /// The server answered something other than an event stream.
        case rejected(EventSourceError)
        /// HTTP 204: stop for good.
        case noContent
        /// ``close()`` was called.
        case cancelled
    }

    /// Connects, reconnects with backoff, and stops on 204, a failure or cancellation.
    func run() async {
        var parser = ServerSentEventParser(lastEventID: configuration.lastEventID, limits: configuration.limits)
        let policy = configuration.reconnect
        var attempt = 0
        var retry = 0
        while true {
            attempt += 1
            setState(.connecting)
            let outcome = await connect(attempt: attempt, parser: &parser)
            switch outcome {
            case .cancelled, .noContent:
                stop(failure: nil)
                return
            case .rejected(let error) where !configuration.retryOnHTTPError:
                trace(.init(phase: .fail, route: configuration.route, attempt: attempt, reason: error.code.description,
                            status: error.status))
                report(error)
                stop(failure: error)
                return
            case .rejected:
                break
            case .dropped(let openFor):
                if let openFor, openFor >= policy.resetAfter { retry = 0 }
            }
            let delay = policy.delayMilliseconds(retry: retry, serverRetryMilliseconds: parser.reconnectionTime)
            retry += 1
            setState(.connecting)
            trace(.init(phase: .reconnect, route: configuration.route, attempt: attempt + 1, delayMs: delay,
                        lastEventID: parser.lastEventID.isEmpty ? nil : parser.lastEventID))
            do {
                try await Task.sleep(for: .milliseconds(delay))
            } catch {
                stop(failure: nil)
                return
            }
        }
    }

    /// One connection: request, response check, streaming into the parser, and the `open`/`close` trace.
    func connect(attempt: Int, parser: inout ServerSentEventParser) async -> ConnectionOutcome {
        if Task.isCancelled { return .cancelled }
        let request = makeRequest(lastEventID: parser.lastEventID)
        let delegate = StreamingDelegate(redirectRule: RedirectRule(
            origin: RedirectRule.Origin(configuration.url), credentialHeaders: configuration.credentialHeaderNames))
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        // URLSession's own read timeout must not fire before ours does.
        sessionConfiguration.timeoutIntervalForRequest = max(configuration.idleTimeout.inSeconds * 2, 60)
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        // The only cookies sent are the app's own `Cookie` header, which the redirect rule controls; a
        // cookie store would add cookies behind its back.
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.httpCookieAcceptPolicy = .never
        let session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: nil)
        defer {
            delegate.finish()
            session.invalidateAndCancel()
        }
        let task = session.dataTask(with: request)
        let clock = ContinuousClock()
        // The connection is a request like any other: one `request` event when the head arrives (or not).
        let traced = (configuration.tracer ?? APITracer.shared).startRequest(
            method: configuration.method, url: configuration.url, route: configuration.route, attempt: attempt,
            bytesOut: Int64(configuration.body?.count ?? 0)
        )
        let started = traced.startedAt
        task.resume()
        let idleTimeout = configuration.idleTimeout
        let watchdog = Task { await delegate.watchIdle(timeout: idleTimeout) }
        defer { watchdog.cancel() }

        var openedAt: ContinuousClock.Instant?
        var events = 0
        var status: Int?
        var reason = "network_error"
        var requestEnded = false
        var refusedRedirect: String?
        var violation: EventSourceError?
        defer { parser.finishStream() }
        stream: for await message in delegate.messages {
            switch message {
            case .response(let response):
                status = response.statusCode
                traced.finish(status: response.statusCode, bytesIn: nil)
                if let refusedRedirect, (300..<400).contains(response.statusCode) {
                    // Apple's URLSession hands over the redirect it was told not to follow.
                    task.cancel()
                    reason = refusedRedirect
                    break stream
                }
                if response.statusCode == 204 {
                    task.cancel()
                    trace(.init(phase: .close, route: configuration.route, attempt: attempt, reason: "http_status",
                                status: 204, events: 0))
                    return .noContent
                }
                if let error = check(response) {
                    task.cancel()
                    if configuration.retryOnHTTPError {
                        trace(.init(phase: .close, route: configuration.route, attempt: attempt,
                                    reason: error.code.description, status: error.status, events: 0))
                    }
                    return .rejected(error)
                }
                let now = clock.now
                openedAt = now
                setState(.open)
                trace(.init(phase: .open, route: configuration.route, attempt: attempt, status: response.statusCode,
                            durationMs: (now - started).inMilliseconds))
            case .data(let data):
                guard openedAt != nil else { continue }
                let previousID = parser.lastEventID
                var stopped = false
                data.withUnsafeBytes { bytes in
                    parser.push(bytes) { event in
                        guard !stopped else { return }
                        events += 1
                        if !deliver(event) { stopped = true }
                    }
                }
                // An `id` in a block without data moves the last event id without an event.
                if parser.lastEventID != previousID { updateLastEventID(parser.lastEventID) }
                if let exceeded = parser.limitExceeded {
                    task.cancel()
                    violation = EventSourceError(
                        code: exceeded.kind == .lineTooLong ? .lineTooLong : .eventTooLarge, status: status ?? 200,
                        contentType: nil, method: configuration.method, url: configuration.redactedURL,
                        limit: exceeded.limit)
                    break stream
                }
            case .redirectRefused(let why):
                refusedRedirect = why
            case .complete(let error):
                if let error = error as? URLError, error.code == .httpTooManyRedirects {
                    reason = "too_many_redirects"  // FoundationNetworking's own limit, met before ours
                } else {
                    reason = refusedRedirect ?? (error == nil && openedAt != nil ? "end_of_stream" : "network_error")
                }
                if status == nil, !requestEnded {
                    traced.fail(error ?? URLError(.badServerResponse))
                    requestEnded = true
                }
            case .idleTimeout:
                reason = "idle_timeout"
                if status == nil, !requestEnded {
                    traced.fail(URLError(.timedOut))
                    requestEnded = true
                }
                task.cancel()
            }
            if reason == "idle_timeout" || Task.isCancelled { break }
        }
        if Task.isCancelled {
            reason = "closed_by_client"
            if status == nil, !requestEnded { traced.fail(CancellationError()) }
        } else {
            setState(.connecting)  // never "open" on a dead connection, not even until the reconnect
        }
        let openFor = openedAt.map { clock.now - $0 }
        if let violation, !Task.isCancelled {
            // The server broke a limit: a failure of its own kind, but one the client recovers from by
            // reconnecting; such a connection never resets the backoff.
            trace(.init(phase: .fail, route: configuration.route, attempt: attempt, reason: violation.code.description,
                        status: status, events: events, durationMs: openFor?.inMilliseconds))
            report(violation)
            return .dropped(openFor: nil)
        }
        trace(.init(phase: .close, route: configuration.route, attempt: attempt, reason: reason, status: status,
                    events: events, durationMs: openFor?.inMilliseconds))
        return reason == "closed_by_client" ? .cancelled : .dropped(openFor: openFor)
    }

    func makeRequest(lastEventID: String) -> URLRequest {
        var request = URLRequest(url: configuration.url)
        request.httpMethod = configuration.method
        request.httpBody = configuration.body
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
        for header in configuration.headers { request.setValue(header.value, forHTTPHeaderField: header.name) }
        if !lastEventID.isEmpty { request.setValue(lastEventID, forHTTPHeaderField: "Last-Event-ID") }
        return request
    }

    /// `nil` when the response is 200 `text/event-stream`.
    func check(_ response: HTTPURLResponse) -> EventSourceError? {
        var contentType: String?
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, name.lowercased() == "content-type" { contentType = value as? String }
        }
        let code: EventSourceError.Code
        if response.statusCode != 200 {
            code = .httpStatus
        } else if let contentType, Self.isEventStream(contentType) {
            return nil
        } else {
            code = .contentType
        }
        return EventSourceError(code: code, status: response.statusCode, contentType: contentType,
                                method: configuration.method, url: configuration.redactedURL)
    }

    static func isEventStream(_ contentType: String) -> Bool {
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first ?? ""
        return mediaType.trimmingCharacters(in: .whitespaces).lowercased() == "text/event-stream"
    }
}
