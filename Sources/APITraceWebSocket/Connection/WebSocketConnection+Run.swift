import APITraceCapture
import APITraceFormat
import Foundation

extension WebSocketConnection {
    /// Connects, reconnects with backoff after the closes the policy retries, and stops on a close it
    /// does not retry, on too many failed attempts in a row, or on ``close(code:reason:)``.
    func run() async {
        let policy = configuration.reconnect
        let route = configuration.route
        var attempt = 0
        var retry = 0
        var failedInARow = 0
        guard let scheme = configuration.url.scheme?.lowercased(), ["ws", "wss"].contains(scheme), configuration.url.host != nil else {
            trace(.init(phase: .fail, route: route, reason: "invalid_url"))
            return stop(failure: WebSocketError(code: .refused, url: configuration.redactedURL, attempts: 0))
        }
        while true {
            attempt += 1
            if isClosing { return stop(failure: nil) }
            let link = WebSocketLink(
                number: attempt, buffer: buffer, maximumMessageSize: configuration.maximumMessageSize, notConnected: notConnected
            ) { [attempt] handshakeTime in
                self.trace(.init(phase: .open, route: route, attempt: attempt, durationMs: handshakeTime.inMilliseconds))
            }
            let end: WebSocketAttemptEnd
            if let headers = await headers(attempt: attempt) {
                shared.withLock { $0.link = link }
                end = await runAttempt(link, request: WebSocketRequest(
                    url: configuration.url, headers: headers, subprotocols: configuration.subprotocols,
                    maximumFrameSize: configuration.maximumFrameSize, closeTimeout: configuration.closeTimeout))
                shared.withLock { $0.link = nil }
            } else {
                end = .notOpened(reason: Task.isCancelled ? "closed_by_client" : "header_refresh_failed", status: nil)
            }
            let stats = link.stats.withLock { $0 }
            let now = ContinuousClock.now

            switch end {
            case .notOpened(let reason, let status):
                failedInARow += 1
                let closedBy: WebSocketClose.Initiator = reason == "refused" ? .server : reason == "network_error" ? .network : .client
                trace(.init(phase: .close, route: route, attempt: attempt, code: 1006, reason: reason, closedBy: closedBy.rawValue,
                            status: status, durationMs: (now - stats.startedAt).inMilliseconds))
                buffer.pushNow(.disconnected(WebSocketClose(code: 1006, closedBy: closedBy, attempt: attempt)))
                if isClosing { return stop(failure: nil) }
                if let maximum = policy.maximumFailedAttempts, failedInARow >= maximum {
                    trace(.init(phase: .fail, route: route, attempt: attempt, reason: reason, status: status))
                    return stop(failure: WebSocketError(
                        code: .refused, url: configuration.redactedURL, attempts: failedInARow, status: status))
                }
            case .closed(let code, let reason, let closedBy):
                failedInARow = 0
                let openedAt = stats.openedAt ?? stats.startedAt
                var silence = stats.longestSilence
                if let last = stats.lastFrameAt, now - last > silence { silence = now - last }
                let reasonClass = stats.abortReason ?? TraceEvent.WebSocket.reasonClass(ofCode: code)
                trace(.init(
                    phase: .close, route: route, attempt: attempt, code: code, reason: reasonClass, closedBy: closedBy.rawValue,
                    durationMs: (now - openedAt).inMilliseconds, messagesIn: stats.messagesIn, messagesOut: stats.messagesOut,
                    bytesIn: stats.bytesIn, bytesOut: stats.bytesOut, pings: stats.pings,
                    pingRTTMs: stats.pings > 0 ? stats.roundTrips.inMilliseconds / Double(stats.pings) : nil,
                    silenceMs: silence.inMilliseconds))
                buffer.pushNow(.disconnected(WebSocketClose(code: code, reason: reason, closedBy: closedBy, attempt: attempt)))
                if isClosing { return stop(failure: nil) }
                if stats.abortReason == "message_too_big" {
                    trace(.init(phase: .fail, route: route, attempt: attempt, code: code, reason: "message_too_big"))
                    return stop(failure: WebSocketError(
                        code: .messageTooLarge, url: configuration.redactedURL, closeCode: code, limit: configuration.maximumMessageSize))
                }
                let dropped = stats.abortReason == "ping_timeout" || stats.abortReason == "close_timeout"
                if !dropped, !policy.reconnects(afterCode: code) {
                    if code == 1000 { return stop(failure: nil) }
                    trace(.init(phase: .fail, route: route, attempt: attempt, code: code, reason: reasonClass))
                    return stop(failure: WebSocketError(code: .closedByPolicy, url: configuration.redactedURL, closeCode: code))
                }
                if now - openedAt >= policy.resetAfter { retry = 0 }
            }

            let delay = policy.delayMilliseconds(retry: retry)
            retry += 1
            trace(.init(phase: .reconnect, route: route, attempt: attempt + 1, delayMs: delay))
            buffer.pushNow(.reconnecting(attempt: attempt + 1, delay: .milliseconds(delay)))
            do {
                try await Task.sleep(for: .milliseconds(delay))
            } catch {
                return stop(failure: nil)
            }
        }
    }

    private var isClosing: Bool { shared.withLock { $0.closing != nil } }

    private func stop(failure: WebSocketError?) {
        shared.withLock { s in
            if s.closing == nil { s.closing = (1000, nil) }
        }
        buffer.finish(throwing: failure)
    }

    /// The headers of attempt `attempt`: the refreshed ones when there is a hook, `nil` when it failed.
    private func headers(attempt: Int) async -> [(name: String, value: String)]? {
        guard let refresh = configuration.refreshHeaders else { return configuration.headers }
        do {
            let headers = try await refresh(attempt)
            return Task.isCancelled ? nil : headers
        } catch {
            return nil
        }
    }

    /// One attempt: the transport on a task of its own, watched for a handshake that never ends, a
    /// peer that stops answering pings and a close the peer never answers.
    private func runAttempt(_ link: WebSocketLink, request: WebSocketRequest) async -> WebSocketAttemptEnd {
        let transport = configuration.transport.make()
        let transportTask = Task { link.finish(await transport.connect(request, link: link)) }
        let watchdog = Task { await watch(link, transportTask: transportTask) }
        let end = await withTaskCancellationHandler {
            await link.waitForEnd()
        } onCancel: {
            transportTask.cancel()
            let opened = link.stats.withLock { s in
                if s.abortReason == nil { s.abortReason = "closed_by_client" }
                return s.openedAt != nil
            }
            link.finish(opened ? .closed(code: 1006, reason: nil, closedBy: .client) : .notOpened(reason: "closed_by_client", status: nil))
        }
        watchdog.cancel()
        return end
    }

    private func watch(_ link: WebSocketLink, transportTask: Task<Void, Never>) async {
        let tick = min(configuration.pingInterval.map { $0 / 4 } ?? .milliseconds(250), .milliseconds(250))
        let configuration = configuration
        while !Task.isCancelled {
            do { try await Task.sleep(for: max(tick, .milliseconds(10))) } catch { return }
            let now = ContinuousClock.now
            enum Verdict { case fine, ping(UInt64), abort(String) }
            let stalled = link.isStalled
            let nextPing = shared.withLock { s -> UInt64 in s.pingID += 1; return s.pingID }
            let verdict: Verdict = link.stats.withLock { s in
                if s.end != nil { return .abort("") }
                guard let openedAt = s.openedAt else {
                    return now - s.startedAt > configuration.handshakeTimeout ? .abort("handshake_timeout") : .fine
                }
                if let asked = s.closeRequestedAt {
                    return now - asked > configuration.closeTimeout + .seconds(1) ? .abort("close_timeout") : .fine
                }
                guard let interval = configuration.pingInterval else { return .fine }
                if stalled {
                    // The app is behind and nobody reads the socket: the silence is ours, not the peer's.
                    s.pingSentAt = nil
                    s.lastPingAt = now
                    return .fine
                }
                if let sent = s.pingSentAt {
                    guard now - sent > configuration.pingTimeout else { return .fine }
                    if let last = s.lastFrameAt, last > sent {
                        s.pingSentAt = nil  // frames kept coming: alive, even without the pong
                        return .fine
                    }
                    return .abort("ping_timeout")
                }
                if now - (s.lastPingAt ?? openedAt) >= interval {
                    s.pingID = nextPing
                    s.pingSentAt = now
                    s.lastPingAt = now
                    return .ping(nextPing)
                }
                return .fine
            }
            switch verdict {
            case .fine: continue
            case .ping(let id): link.send(.ping(id))
            case .abort(""): return
            case .abort(let reason):
                let opened = link.stats.withLock { s in
                    if s.abortReason == nil { s.abortReason = reason }
                    return s.openedAt != nil
                }
                transportTask.cancel()
                // The transport ends promptly on cancellation, except inside a handshake NIO does not
                // cancel: then the attempt ends now and the transport's task is left to finish alone.
                try? await Task.sleep(for: .seconds(2))
                link.finish(opened ? .closed(code: 1006, reason: nil, closedBy: .client) : .notOpened(reason: reason, status: nil))
                return
            }
        }
    }
}
