import APITraceFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Posts OTLP payloads over HTTP: gzip when the endpoint asks for it, the endpoint's headers,
/// retries on 429, 502, 503 and 504 and on network errors with the format module's ``Backoff``
/// (honouring `Retry-After`, read by the one bounded parser ``RetryAfter``), a deadline per attempt,
/// redirects refused (headers never follow them), response bodies read up to a small cap.
///
/// Messages name the endpoint's scheme, host, port and signal only: never a header, a query or user information.
public struct OTLPSender: Sendable {
    /// The endpoint.
    public var endpoint: OTLPEndpoint
    /// Tries per payload, the first included.
    public var maxAttempts = 5
    /// Ceiling of the first backoff delay; doubled after each failed attempt.
    public var backoff: Duration = .milliseconds(500)
    /// The longest wait between attempts; a longer `Retry-After` ends the run's tries.
    public var maxRetryAfter: Duration = .seconds(30)
    /// Time allowed for one attempt, from connecting to the end of the response.
    public var timeout: Duration = .seconds(15)
    /// Response bytes kept (for the message of a refusal); the rest is not read.
    public var maxResponseBytes = 16 * 1024
    /// One URLSession for every request of this sender: a session per request cost several times
    /// the CPU of the export itself (threads and connections set up and torn down each time).
    private let transport = Transport()

    /// Creates a sender for `endpoint`.
    public init(endpoint: OTLPEndpoint) { self.endpoint = endpoint }

    /// What became of one payload.
    public enum Outcome: Sendable, Equatable {
        /// Accepted (2xx).
        case sent(attempts: Int, bytesOnWire: Int)
        /// Not accepted after the tries: worth sending again later.
        case failed(attempts: Int, reason: String)
        /// Refused with a status that retrying will not change (400, 401, 413...).
        case rejected(attempts: Int, reason: String)
    }

    /// Sends `payload` (already encoded) to the signal's URL, waiting for the outcome.
    public func send(_ payload: [UInt8], signal: OTLPEndpoint.Signal) -> Outcome {
        let body: [UInt8]
        do { body = try self.body(payload) } catch {
            return .rejected(attempts: 0, reason: "cannot gzip the payload: \(error)")
        }
        return send(body: body, signal: signal)
    }

    /// The body ``send(body:signal:)`` posts for an encoded payload: gzipped when the endpoint asks
    /// for it. Safe to call on any thread (an export prepares bodies on its reading threads).
    public func body(_ payload: [UInt8]) throws -> [UInt8] {
        try endpoint.gzip ? GzipDeflater.compressWhole(payload, level: 1) : payload
    }

    /// Sends a body made by ``body(_:)`` to the signal's URL, waiting for the outcome.
    public func send(body: [UInt8], signal: OTLPEndpoint.Signal) -> Outcome {
        guard let url = endpoint.urls[signal] else { return .rejected(attempts: 0, reason: "no URL for \(signal.rawValue)") }
        let where_ = endpoint.displayName(signal)
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue(endpoint.encoding.contentType, forHTTPHeaderField: "Content-Type")
        if endpoint.gzip { request.setValue("gzip", forHTTPHeaderField: "Content-Encoding") }
        request.setValue("apitrace-otlp", forHTTPHeaderField: "User-Agent")
        for header in endpoint.headers { request.setValue(header.value, forHTTPHeaderField: header.name) }
        request.timeoutInterval = max(1, Double(timeout.components.seconds))
        request.httpBody = Data(body)

        var reason = ""
        for attempt in 1...max(1, maxAttempts) {
            let answer = transport.run(request, timeout: timeout, maxResponseBytes: maxResponseBytes)
            var retryAfter: Duration?
            switch answer {
            case .response(let status, let retryAfterHeader, let snippet):
                if (200..<300).contains(status) { return .sent(attempts: attempt, bytesOnWire: body.count) }
                reason = "HTTP \(status) from \(where_)" + (snippet.isEmpty ? "" : ": \(snippet)")
                guard [429, 502, 503, 504].contains(status) else {
                    return .rejected(attempts: attempt, reason: reason + ((300..<400).contains(status) ? " (redirects are not followed)" : ""))
                }
                if let retryAfterHeader {
                    retryAfter = RetryAfter.parse(retryAfterHeader, nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000), cap: .seconds(86_400))
                }
            case .networkError(let code):
                reason = "network error (\(code)) reaching \(where_)"
            case .timedOut:
                reason = "no answer from \(where_) within \(timeout)"
            }
            guard attempt < maxAttempts else { break }
            let wait = retryAfter ?? .milliseconds(Int64(Backoff(initial: backoff, maximum: maxRetryAfter).delayMilliseconds(retry: attempt - 1).rounded(.up)))
            if wait > maxRetryAfter {
                return .failed(attempts: attempt, reason: reason + "; Retry-After \(wait) is longer than this run waits (\(maxRetryAfter))")
            }
            Thread.sleep(forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
        }
        return .failed(attempts: maxAttempts, reason: reason)
    }
}

/// The session of a sender and the exchanges in flight on it, each found by its task.
private final class Transport: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var exchanges: [Int: OneExchange] = [:]
    private var session: URLSession?

    private func currentSession(timeout: TimeInterval) -> URLSession {
        lock.withLock {
            if let session { return session }
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = timeout
            configuration.timeoutIntervalForResource = timeout
            configuration.httpCookieStorage = nil
            configuration.urlCache = nil
            // The session keeps its delegate (this object) until invalidated; the sender's owner
            // lives as long as the process in the CLI, so the cycle costs nothing there.
            let made = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
            session = made
            return made
        }
    }

    func run(_ request: URLRequest, timeout: Duration, maxResponseBytes: Int) -> OneExchange.Answer {
        let session = currentSession(timeout: request.timeoutInterval)
        let exchange = OneExchange(maxResponseBytes: maxResponseBytes)
        let task = session.dataTask(with: request)
        lock.withLock { exchanges[task.taskIdentifier] = exchange }
        defer { lock.withLock { exchanges[task.taskIdentifier] = nil } }
        task.resume()
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        guard exchange.done.wait(timeout: .now() + seconds + 1) == .success else {
            task.cancel()
            return .timedOut
        }
        return exchange.answer()
    }

    private func exchange(_ task: URLSessionTask) -> OneExchange? { lock.withLock { exchanges[task.taskIdentifier] } }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        exchange(dataTask)?.received(response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        // Enough to explain a refusal: the rest is not read.
        if exchange(dataTask)?.received(data) == true { dataTask.cancel() }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        exchange(task)?.completed(error)
    }
}

/// One HTTP exchange: what came back, and a semaphore for its end.
private final class OneExchange: @unchecked Sendable {
    enum Answer {
        case response(status: Int, retryAfter: String?, snippet: String)
        case networkError(String)
        case timedOut
    }

    private let lock = NSLock()
    let done = DispatchSemaphore(value: 0)
    private let maxResponseBytes: Int
    private var status = 0
    private var retryAfter: String?
    private var data = Data()
    private var error: (any Error)?

    init(maxResponseBytes: Int) { self.maxResponseBytes = maxResponseBytes }

    func received(_ response: URLResponse) {
        lock.withLock {
            if let http = response as? HTTPURLResponse {
                status = http.statusCode
                retryAfter = http.value(forHTTPHeaderField: "Retry-After")
            }
        }
    }

    /// Keeps what fits under the cap; true once it is full.
    func received(_ chunk: Data) -> Bool {
        lock.withLock {
            data.append(chunk.prefix(max(0, maxResponseBytes - data.count)))
            return data.count >= maxResponseBytes
        }
    }

    func completed(_ error: (any Error)?) {
        lock.withLock { self.error = error }
        done.signal()
    }

    func answer() -> Answer {
        lock.withLock {
            if status > 0 {
                let text = String(decoding: data.prefix(200), as: UTF8.self)
                let printable = String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? " " : Character($0) })
                return .response(status: status, retryAfter: retryAfter, snippet: printable)
            }
            // URLError descriptions can carry the URL: name the code only.
            let code = (error as? URLError).map { "URLError \($0.code.rawValue)" } ?? error.map { String(describing: type(of: $0)) } ?? "no response"
            return .networkError(code)
        }
    }
}
