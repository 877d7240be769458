import APITraceFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Delivers rendered notifications: HTTP POSTs with retries, or a command run.
///
/// HTTP: 2xx is delivered; 429, 5xx and network errors are retried with the format module's
/// exponential ``Backoff`` (equal jitter, capped at ``maxRetryAfter``; honouring `Retry-After`, read by the one bounded parser ``RetryAfter``) up to the notifier's
/// `max_attempts`; a `Retry-After` longer than ``maxRetryAfter`` leaves the delivery for the next
/// run. A 400 or 413 is tried once more with the smaller body (``NotificationRequest/trimmedBody``);
/// other 4xx are not retried within the run. A command gets the notification JSON on standard
/// input (see ``CommandDelivery``); exit status 0 is delivered.
public struct NotificationSender: Sendable {
    /// Ceiling of the first backoff delay; doubled after each failed attempt (the delay is drawn
    /// between half and all of it).
    public var backoff: Duration = .milliseconds(500)
    /// The longest `Retry-After` honoured within one run; longer waits leave the delivery for the next run.
    public var maxRetryAfter: Duration = .seconds(30)
    /// Time allowed for one HTTP request or command.
    public var timeout: Duration = .seconds(15)

    /// Creates a sender.
    public init() {}

    /// The outcome of one delivery.
    public enum Outcome: Sendable, Equatable {
        /// Accepted by the receiver.
        case delivered(attempts: Int)
        /// Failed after retries (or a network error); worth trying on the next run.
        case failed(attempts: Int, reason: String)
        /// Refused with a 4xx other than 429 (after the trimmed retry for 400 and 413): kept, but the
        /// key, URL or payload probably needs a fix.
        case rejected(attempts: Int, reason: String)
    }

    /// Delivers `request`, retrying as documented. Messages never include secrets.
    public func deliver(_ request: NotificationRequest) async -> Outcome {
        var sender = self
        if let t = request.notifier.timeout { sender.timeout = .milliseconds(t.milliseconds) }
        return await sender.send(request)
    }

    private func send(_ request: NotificationRequest) async -> Outcome {
        if request.notifier.kind == .command { return await runCommand(request) }
        guard let url = request.url else { return .rejected(attempts: 0, reason: "no URL") }
        let attempts = request.notifier.maxAttempts
        var lastReason = ""
        var body = request.body
        var usedTrimmed = false
        var attempt = 0
        while attempt < attempts {
            attempt += 1
            var http = URLRequest(url: url)
            http.httpMethod = "POST"
            http.setValue("application/json", forHTTPHeaderField: "Content-Type")
            http.setValue("apitrace-alert", forHTTPHeaderField: "User-Agent")
            http.httpBody = body
            http.timeoutInterval = max(1, Double(timeout.components.seconds))
            var retryAfter: Duration?
            do {
                let (data, response) = try await URLSession.shared.data(for: http)
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                if (200..<300).contains(status) { return .delivered(attempts: attempt) }
                let snippet = String(decoding: data.prefix(200), as: UTF8.self).replacingOccurrences(of: "\n", with: " ")
                lastReason = "HTTP \(status) from \(request.displayDestination)" + (snippet.isEmpty ? "" : ": \(snippet)")
                if status == 400 || status == 413, !usedTrimmed, let trimmed = request.trimmedBody, trimmed != body {
                    // Refused as invalid or too large: once more, at once, with less evidence.
                    usedTrimmed = true
                    body = trimmed
                    attempt -= 1
                    lastReason += " (sent \(request.body.count) bytes; retrying with trimmed evidence)"
                    continue
                }
                if status != 429, status < 500 {
                    return .rejected(attempts: attempt, reason: lastReason + (usedTrimmed ? "; the trimmed body was refused too" : ""))
                }
                if let header = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After") {
                    retryAfter = RetryAfter.parse(header, nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000), cap: .seconds(86_400))
                    if retryAfter == nil { lastReason += " (ignored an unreadable Retry-After)" }
                }
            } catch {
                // URLError descriptions can carry the URL, which may hold a token: name the destination instead.
                let code = (error as? URLError).map { "URLError \($0.code.rawValue)" } ?? String(describing: type(of: error))
                lastReason = "network error (\(code)) reaching \(request.displayDestination)"
            }
            guard attempt < attempts else { break }
            let wait = retryAfter ?? .milliseconds(Int64(Backoff(initial: backoff, maximum: maxRetryAfter).delayMilliseconds(retry: attempt - 1).rounded(.up)))
            if wait > maxRetryAfter {
                return .failed(attempts: attempt, reason: lastReason + "; Retry-After \(wait) is longer than this run waits (\(maxRetryAfter))")
            }
            try? await Task.sleep(for: wait)
        }
        return .failed(attempts: attempt, reason: lastReason)
    }

    private func runCommand(_ request: NotificationRequest) async -> Outcome {
        guard let command = request.notifier.command else { return .rejected(attempts: 0, reason: "no command") }
        let name = request.notifier.name
        switch await CommandDelivery.run(command, input: Array(request.body), environment: request.commandEnvironment, timeout: timeout) {
        case .exited(0): return .delivered(attempts: 1)
        case .exited(let status): return .failed(attempts: 1, reason: "command of notifier \(name) exited with status \(status)")
        case .signalled(let signal): return .failed(attempts: 1, reason: "command of notifier \(name) was ended by signal \(signal)")
        case .timedOut: return .failed(attempts: 1, reason: "command of notifier \(name) ran longer than \(timeout); its process group was killed")
        case .notStarted(let why): return .failed(attempts: 1, reason: "cannot start command of notifier \(name): \(why)")
        }
    }
}
