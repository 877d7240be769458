import APITraceFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP POST to a receiver that nothing the receiver does can stretch or swell.
///
/// - One deadline covers the whole attempt (connect, request, headers and body): a receiver that
///   drips a byte every two seconds or never answers is cut off at the deadline, not when it pauses.
/// - A 2xx ends the attempt at its headers; any other answer's body is read up to ``bodyCap`` bytes
///   and the connection is then dropped, so an endless or 10 GB body costs at most the cap.
/// - Redirects are never followed: the `3xx` itself is the answer (a POST must not become a GET to
///   another host, nor carry the page somewhere else).
///
/// `URLSession.data(for:)` holds the whole body and its timeout is an idle timer; a data delegate
/// sees each chunk and can stop at once, on Linux and Apple platforms alike.
enum BoundedPost {
    /// The most bytes of a response body kept (error bodies are quoted in messages, cut shorter).
    static let bodyCap = 4096

    /// What came back.
    struct Answer: Sendable {
        var status: Int
        var retryAfter: String?
        var location: String?
        /// At most ``bodyCap`` bytes.
        var body: [UInt8]
        /// True when the body went on past what was kept.
        var truncated: Bool
    }

    enum Result: Sendable {
        case answered(Answer)
        /// The deadline passed before an answer was complete enough to act on.
        case timedOut
        /// The connection failed; the description names no URL.
        case failed(String)
    }

    /// Posts `body` to `url` and waits at most until `deadline`.
    static func post(_ url: URL, body: Data, headers: [String: String], deadline: ContinuousClock.Instant) async -> Result {
        let remaining = deadline - .now
        guard remaining > .zero else { return .timedOut }
        let seconds = remaining.inSeconds
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        // URLSession's own timers are idle timers; ours is the deadline. Theirs only back it up.
        request.timeoutInterval = seconds + 5
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = seconds + 5
        configuration.timeoutIntervalForResource = seconds + 5
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        let delegate = Delegate()
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: request)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result, Never>) in
                delegate.start(continuation, task: task)
                task.resume()
                let timer = Task {
                    try? await Task.sleep(until: deadline, clock: .continuous)
                    delegate.finish(.timedOut)
                }
                delegate.onFinish { timer.cancel() }
            }
        } onCancel: {
            delegate.finish(.timedOut)
        }
    }

    /// Collects one task's answer within the caps and resumes its waiter exactly once.
    final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        private struct State {
            var continuation: CheckedContinuation<Result, Never>?
            var task: URLSessionTask?
            var answer: Answer?
            var finished: Result?
            var onFinish: [@Sendable () -> Void] = []
        }
        private let state = Locked(State())

        func start(_ continuation: CheckedContinuation<Result, Never>, task: URLSessionTask) {
            let early = state.withLock { s -> Result? in
                s.task = task
                if let done = s.finished { return done }  // cancelled before it started
                s.continuation = continuation
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }

        func onFinish(_ action: @escaping @Sendable () -> Void) {
            let done = state.withLock { s -> Bool in
                if s.finished != nil { return true }
                s.onFinish.append(action)
                return false
            }
            if done { action() }
        }

        /// Ends the attempt with `result` (the first call wins) and drops the connection.
        func finish(_ result: Result) {
            let (continuation, task, actions) = state.withLock { s -> (CheckedContinuation<Result, Never>?, URLSessionTask?, [@Sendable () -> Void]) in
                guard s.finished == nil else { return (nil, nil, []) }
                s.finished = result
                defer { s.continuation = nil; s.onFinish = [] }
                return (s.continuation, s.task, s.onFinish)
            }
            task?.cancel()
            actions.forEach { $0() }
            continuation?.resume(returning: result)
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            // Never followed: the 3xx is the answer. Kept here for platforms that then report the
            // refused redirect as an error instead of as the response; not finished here, since
            // cancelling the task inside this callback traps in swift-corelibs-foundation.
            state.withLock { $0.answer = Self.answer(response) }
            completionHandler(nil)
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            let answer = Self.answer(response as? HTTPURLResponse)
            if (200..<300).contains(answer.status) || (300..<400).contains(answer.status) {
                finish(.answered(answer))  // accepted (or redirected): the body is of no use
                completionHandler(.cancel)
                return
            }
            state.withLock { $0.answer = answer }
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            let full = state.withLock { s -> Answer? in
                guard var answer = s.answer, s.finished == nil else { return nil }
                let room = BoundedPost.bodyCap - answer.body.count
                answer.body += data.prefix(room)
                if data.count > room { answer.truncated = true }
                s.answer = answer
                return answer.truncated ? answer : nil
            }
            if let full { finish(.answered(full)) }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            let answer = state.withLock { $0.answer }
            if let answer {
                finish(.answered(answer))
            } else if let error {
                // URLError descriptions can carry the URL, which may hold a token: the code only.
                let code = (error as? URLError).map { "URLError \($0.code.rawValue)" } ?? String(describing: type(of: error))
                finish(.failed(code))
            } else {
                finish(.failed("no response"))
            }
        }

        private static func answer(_ response: HTTPURLResponse?) -> Answer {
            Answer(status: response?.statusCode ?? 0, retryAfter: response?.value(forHTTPHeaderField: "Retry-After"),
                   location: response?.value(forHTTPHeaderField: "Location"), body: [], truncated: false)
        }
    }
}
