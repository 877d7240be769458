import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Delivers rendered notifications: HTTP POSTs with retries, or a command run.
///
/// HTTP: 2xx is delivered; 429, 5xx and network errors are retried with exponential backoff
/// (honouring `Retry-After`, capped at ``maxRetryAfter``) up to the notifier's `max_attempts`;
/// other 4xx are not retried (the payload or the key is wrong and would fail again).
/// A command gets the notification JSON on standard input; exit status 0 is delivered.
public struct NotificationSender: Sendable {
    /// First backoff delay; doubled after each failed attempt.
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
        /// Refused with a 4xx other than 429: retrying would not help.
        case rejected(reason: String)
    }

    /// Delivers `request`, retrying as documented. Messages never include secrets.
    public func deliver(_ request: NotificationRequest) async -> Outcome {
        if request.notifier.kind == .command { return await runCommand(request) }
        guard let url = request.url else { return .rejected(reason: "no URL") }
        var delay = backoff
        let attempts = request.notifier.maxAttempts
        var lastReason = ""
        for attempt in 1...attempts {
            var http = URLRequest(url: url)
            http.httpMethod = "POST"
            http.setValue("application/json", forHTTPHeaderField: "Content-Type")
            http.setValue("apitrace-alert", forHTTPHeaderField: "User-Agent")
            http.httpBody = request.body
            http.timeoutInterval = Double(timeout.components.seconds)
            var retryAfter: Duration?
            do {
                let (data, response) = try await URLSession.shared.data(for: http)
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                if (200..<300).contains(status) { return .delivered(attempts: attempt) }
                let snippet = String(decoding: data.prefix(200), as: UTF8.self).replacingOccurrences(of: "\n", with: " ")
                lastReason = "HTTP \(status) from \(request.displayDestination)" + (snippet.isEmpty ? "" : ": \(snippet)")
                if status != 429, status < 500 { return .rejected(reason: lastReason) }
                if let header = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After") {
                    retryAfter = Self.parseRetryAfter(header)
                }
            } catch {
                // URLError descriptions can carry the URL, which may hold a token: name the destination instead.
                let code = (error as? URLError).map { "URLError \($0.code.rawValue)" } ?? String(describing: type(of: error))
                lastReason = "network error (\(code)) reaching \(request.displayDestination)"
            }
            guard attempt < attempts else { break }
            let wait = retryAfter.map { max($0, .zero) } ?? delay
            if wait > maxRetryAfter {
                return .failed(attempts: attempt, reason: lastReason + "; Retry-After \(wait) is longer than this run waits")
            }
            try? await Task.sleep(for: wait)
            delay = delay * 2
        }
        return .failed(attempts: attempts, reason: lastReason)
    }

    /// `Retry-After` as seconds or an HTTP date.
    static func parseRetryAfter(_ header: String) -> Duration? {
        let text = header.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(text), seconds >= 0 { return .milliseconds(Int64(seconds * 1000)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        return .milliseconds(Int64(max(0, date.timeIntervalSinceNow) * 1000))
    }

    private func runCommand(_ request: NotificationRequest) async -> Outcome {
        guard let command = request.notifier.command else { return .rejected(reason: "no command") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.environment = ProcessInfo.processInfo.environment.merging(request.commandEnvironment) { $1 }
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        do { try process.run() } catch {
            return .failed(attempts: 1, reason: "cannot start command of notifier \(request.notifier.name): \(error.localizedDescription)")
        }
        try? input.fileHandleForWriting.write(contentsOf: request.body)
        try? input.fileHandleForWriting.close()
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while process.isRunning, clock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning {
            process.terminate()
            return .failed(attempts: 1, reason: "command of notifier \(request.notifier.name) ran longer than \(timeout); stopped")
        }
        let status = process.terminationStatus
        return status == 0 ? .delivered(attempts: 1) : .failed(attempts: 1, reason: "command of notifier \(request.notifier.name) exited with status \(status)")
    }
}
