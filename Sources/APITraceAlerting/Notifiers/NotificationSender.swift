import APITraceFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Delivers rendered notifications: HTTP POSTs with retries, or a command run.
///
/// HTTP: each attempt is one ``BoundedPost``: one deadline (``timeout``, or the notifier's) for
/// connect, headers and body, at most a few KB of any answer read, redirects never followed. 2xx is
/// delivered; 408, 429, 500 and up (`RequestOutcome.isRetryable(status:)`, the uploader's rule too),
/// timeouts and network errors are retried with the format module's exponential
/// ``Backoff`` (equal jitter, capped at ``maxRetryAfter``; honouring `Retry-After`, read by the one
/// bounded parser ``RetryAfter``) up to the notifier's `max_attempts`; a `Retry-After` longer than
/// ``maxRetryAfter`` leaves the delivery for the next run. A `3xx` is a failure kept for the next
/// run, named by the redirect's host. A 400 or 413 is tried once more with the smaller body
/// (``NotificationRequest/trimmedBody``); other 4xx are not retried within the run. A command gets
/// the notification JSON on standard input (see ``CommandDelivery``); exit status 0 is delivered.
///
/// Nothing goes on past the `deadline` a caller passes (the run's budget): an attempt is cut at
/// it, and no retry starts that could not finish before it. Every reason is scrubbed of the
/// notifier's secrets and of control characters (``SecretScrubber``).
package struct NotificationSender: Sendable {
    /// Ceiling of the first backoff delay; doubled after each failed attempt (the delay is drawn
    /// between half and all of it).
    package var backoff: Duration = .milliseconds(500)
    /// The longest `Retry-After` honoured within one run; longer waits leave the delivery for the next run.
    package var maxRetryAfter: Duration = .seconds(30)
    /// Time allowed for one whole HTTP attempt (connect, headers and body) or one run of a command.
    package var timeout: Duration = .seconds(15)

    /// The most characters of a receiver's answer or a command's standard error quoted in a message.
    package static let quoteLimit = 200

    /// Creates a sender.
    package init() {}

    /// The request's headers; `identity` so no error body is inflated (it is read streaming and capped anyway).
    static let headers = ["Content-Type": "application/json", "User-Agent": "apitrace-alert", "Accept-Encoding": "identity"]

    /// The outcome of one delivery.
    package enum Outcome: Sendable, Equatable {
        /// Accepted by the receiver.
        case delivered(attempts: Int)
        /// Failed after retries (or a network error, a timeout, a redirect); worth trying on the next run.
        case failed(attempts: Int, reason: String)
        /// Refused with a 4xx other than 408 and 429 (after the trimmed retry for 400 and 413): kept, but the
        /// key, URL or payload probably needs a fix.
        case rejected(attempts: Int, reason: String)
    }

    /// Delivers `request`, retrying as documented, and gives up at `deadline`. Messages never include secrets.
    package func deliver(_ request: NotificationRequest, until deadline: ContinuousClock.Instant? = nil) async -> Outcome {
        var sender = self
        if let t = request.notifier.timeout { sender.timeout = .milliseconds(t.milliseconds) }
        let deadline = deadline ?? .now.advanced(by: .seconds(86_400))
        let scrubber = request.scrubber
        switch await sender.send(request, deadline: deadline) {
        case .delivered(let attempts): return .delivered(attempts: attempts)
        case .failed(let attempts, let reason): return .failed(attempts: attempts, reason: scrubber.scrub(reason))
        case .rejected(let attempts, let reason): return .rejected(attempts: attempts, reason: scrubber.scrub(reason))
        }
    }

    /// A receiver's text as a message may quote it: secrets and control characters out, cut short.
    static func quote(_ bytes: [UInt8], truncated: Bool, scrubber: SecretScrubber) -> String {
        // Scrubbed whole first (a secret cut by the quote's limit would no longer be recognised), then cut.
        var text = scrubber.scrub(String(decoding: bytes, as: UTF8.self), truncated: truncated)
        if text.count > quoteLimit { text = scrubber.scrub(String(text.prefix(quoteLimit)), truncated: true) }
        return text.trimmingCharacters(in: .whitespaces)
    }

    private func send(_ request: NotificationRequest, deadline: ContinuousClock.Instant) async -> Outcome {
        if request.notifier.kind == .command { return await runCommand(request, deadline: deadline) }
        guard let url = request.url else { return .rejected(attempts: 0, reason: "no URL") }
        let attempts = request.notifier.maxAttempts
        let destination = request.displayDestination
        var lastReason = ""
        var body = request.body
        var usedTrimmed = false
        var attempt = 0
        while attempt < attempts {
            attempt += 1
            let attemptDeadline = min(deadline, .now.advanced(by: timeout))
            var retryAfter: Duration?
            switch await BoundedPost.post(url, body: body, headers: Self.headers, deadline: attemptDeadline) {
            case .timedOut:
                lastReason = attemptDeadline < deadline
                    ? "no complete answer from \(destination) within \(timeout)"
                    : "no complete answer from \(destination) before the run's delivery budget ran out"
            case .failed(let code):
                lastReason = "network error (\(code)) reaching \(destination)"
            case .answered(let answer):
                let status = answer.status
                if (200..<300).contains(status) { return .delivered(attempts: attempt) }
                if (300..<400).contains(status) {
                    let host = answer.location.flatMap { URL(string: $0, relativeTo: url)?.host } ?? "an unnamed host"
                    // The host only: the Location may carry the token of the URL it was sent to.
                    return .failed(attempts: attempt, reason: "HTTP \(status) from \(destination): a redirect to \(SecretScrubber.oneLine(String(host.prefix(253)))), not followed; point the notifier at the final URL")
                }
                let snippet = Self.quote(answer.body, truncated: answer.truncated, scrubber: request.scrubber)
                lastReason = "HTTP \(status) from \(destination)" + (snippet.isEmpty ? "" : ": \(snippet)")
                if status == 400 || status == 413, !usedTrimmed, let trimmed = request.trimmedBody, trimmed != body {
                    // Refused as invalid or too large: once more, at once, with less evidence.
                    usedTrimmed = true
                    body = trimmed
                    attempt -= 1
                    lastReason += " (sent \(request.body.count) bytes; retrying with trimmed evidence)"
                    continue
                }
                if !RequestOutcome.isRetryable(status: status) {
                    return .rejected(attempts: attempt, reason: lastReason + (usedTrimmed ? "; the trimmed body was refused too" : ""))
                }
                if let header = answer.retryAfter {
                    retryAfter = RetryAfter.parse(header.prefix(64), nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000), cap: .seconds(86_400))
                    if retryAfter == nil { lastReason += " (ignored an unreadable Retry-After)" }
                }
            }
            guard attempt < attempts else { break }
            let wait = retryAfter ?? .milliseconds(Int64(Backoff(initial: backoff, maximum: maxRetryAfter).delayMilliseconds(retry: attempt - 1).rounded(.up)))
            if wait > maxRetryAfter {
                return .failed(attempts: attempt, reason: lastReason + "; Retry-After \(wait) is longer than this run waits (\(maxRetryAfter))")
            }
            if ContinuousClock.now.advanced(by: wait) >= deadline {
                return .failed(attempts: attempt, reason: lastReason + "; no time left in the run's delivery budget to try again")
            }
            try? await Task.sleep(for: wait)
        }
        return .failed(attempts: attempt, reason: lastReason)
    }

    private func runCommand(_ request: NotificationRequest, deadline: ContinuousClock.Instant) async -> Outcome {
        guard let command = request.notifier.command else { return .rejected(attempts: 0, reason: "no command") }
        let name = request.notifier.name
        // The kill takes up to a second more: stop early enough to stay within the budget.
        let budgetLeft = deadline - .now - .seconds(1)
        let limit = min(timeout, max(budgetLeft, .milliseconds(100)))
        let run = await CommandDelivery.run(command, input: Array(request.body), environment: request.commandEnvironment, timeout: limit)
        let said = run.stderr.isEmpty ? "" : "; its standard error: " + Self.quote(run.stderr, truncated: run.stderrTruncated, scrubber: request.scrubber)
        switch run.ending {
        case .exited(0): return .delivered(attempts: 1)
        case .exited(let status): return .failed(attempts: 1, reason: "command of notifier \(name) exited with status \(status)" + said)
        case .signalled(let signal): return .failed(attempts: 1, reason: "command of notifier \(name) was ended by signal \(signal)" + said)
        case .timedOut:
            let why = limit < timeout ? "ran past the run's delivery budget" : "ran longer than \(timeout)"
            return .failed(attempts: 1, reason: "command of notifier \(name) \(why); its process group was killed" + said)
        case .notStarted(let why): return .failed(attempts: 1, reason: "cannot start command of notifier \(name): \(why)")
        }
    }
}
