import APITraceFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns one streaming URLSession data task into an async sequence of messages, and watches for silence.
///
/// `URLSession.bytes(for:)` does not exist on Linux; the data delegate does, everywhere.
final class StreamingDelegate: NSObject, URLSessionDataDelegate, Sendable {
    enum Message: Sendable {
        case response(HTTPURLResponse)
        case data(Data)
        case complete((any Error)?)
        case idleTimeout
        /// A redirect was refused (trace reason); the task then ends without a usable response.
        case redirectRefused(String)
    }

    let messages: AsyncStream<Message>
    private let continuation: AsyncStream<Message>.Continuation
    private let lastActivity = Locked(ContinuousClock.now)
    private let redirectRule: RedirectRule
    /// Redirects followed so far, and whether the chain left the stream's origin.
    private let redirects = Locked((count: 0, leftOrigin: false))

    init(redirectRule: RedirectRule) {
        (messages, continuation) = AsyncStream.makeStream(of: Message.self)
        self.redirectRule = redirectRule
        super.init()
    }

    /// Ends the sequence: whatever URLSession still delivers for the task (a cancelled transfer may
    /// go on for a while) is dropped instead of piling up unread.
    func finish() {
        continuation.finish()
    }

    /// Waits in slices until nothing arrived for `timeout`, then reports it. Cancel the task to stop watching.
    func watchIdle(timeout: Duration) async {
        while !Task.isCancelled {
            let silence = ContinuousClock.now - lastActivity.withLock { $0 }
            if silence >= timeout {
                continuation.yield(.idleTimeout)
                return
            }
            do { try await Task.sleep(for: timeout - silence) } catch { return }
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        lastActivity.withLock { $0 = .now }
        if let http = response as? HTTPURLResponse { continuation.yield(.response(http)) }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lastActivity.withLock { $0 = .now }
        continuation.yield(.data(data))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        lastActivity.withLock { $0 = .now }
        let decision = redirects.withLock { state -> RedirectRule.Decision in
            state.count += 1
            let decision = redirectRule.decide(
                proposed: request, response: response, hop: state.count, leftOriginBefore: state.leftOrigin)
            if case .follow(_, let leftOrigin) = decision { state.leftOrigin = leftOrigin }
            return decision
        }
        switch decision {
        case .follow(let next, _):
            completionHandler(next)
        case .refuse(let reason):
            // Not followed: URLSession ends the task with the redirect response as the final one.
            continuation.yield(.redirectRefused(reason))
            completionHandler(nil)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        continuation.yield(.complete(error))
        continuation.finish()
    }
}
