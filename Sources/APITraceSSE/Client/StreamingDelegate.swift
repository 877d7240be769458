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
    }

    let messages: AsyncStream<Message>
    private let continuation: AsyncStream<Message>.Continuation
    private let lastActivity = Locked(ContinuousClock.now)

    override init() {
        (messages, continuation) = AsyncStream.makeStream(of: Message.self)
        super.init()
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

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        continuation.yield(.complete(error))
        continuation.finish()
    }
}
