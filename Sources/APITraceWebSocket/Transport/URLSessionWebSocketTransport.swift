#if canImport(Darwin)
import APITraceFormat
import Foundation

/// The transport on `URLSessionWebSocketTask`, Apple's native client.
///
/// Not built nor run on this project's Linux CI (swift-corelibs-foundation's task needs a libcurl
/// with WebSocket support that the toolchains do not ship): it is kept small, behind the same
/// ``WebSocketTransport`` protocol and the same connection logic as the swift-websocket transport,
/// which the tests run against real servers. Pongs come from `sendPing`'s handler, the close code
/// and the subprotocol from the task, and redirects to another origin are refused so that
/// credentials never leave the configured origin.
struct URLSessionWebSocketTransport: WebSocketTransport {
    func connect(_ request: WebSocketRequest, link: WebSocketLink) async -> WebSocketAttemptEnd {
        var urlRequest = URLRequest(url: request.url)
        for header in request.headers { urlRequest.setValue(header.value, forHTTPHeaderField: header.name) }
        if !request.subprotocols.isEmpty {
            urlRequest.setValue(request.subprotocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol")
        }
        let delegate = Delegate(origin: Self.origin(of: request.url))
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: urlRequest)
        task.maximumMessageSize = link.maximumMessageSize
        task.resume()
        return await withTaskCancellationHandler {
            guard await delegate.opened.wait() else {
                let status = (task.response as? HTTPURLResponse)?.statusCode
                return .notOpened(reason: status == nil ? "network_error" : "refused", status: status)
            }
            link.opened(WebSocketHandshake(attempt: link.number, subprotocol: delegate.subprotocol.withLock { $0 }))
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await Self.write(link.commands, task: task, link: link) }
                await Self.read(task, link: link)
                group.cancelAll()
            }
            return Self.end(task, link: link)
        } onCancel: {
            task.cancel()
        }
    }

    static func end(_ task: URLSessionWebSocketTask, link: WebSocketLink) -> WebSocketAttemptEnd {
        let stats = link.stats.withLock { $0 }
        if let clientClose = stats.clientClose { return .closed(code: clientClose.code, reason: clientClose.reason, closedBy: .client) }
        if stats.abortReason != nil { return .closed(code: 1006, reason: nil, closedBy: .client) }
        let code = task.closeCode.rawValue
        guard code != URLSessionWebSocketTask.CloseCode.invalid.rawValue, code != 1006 else {
            return .closed(code: 1006, reason: nil, closedBy: .network)
        }
        return .closed(code: code, reason: task.closeReason.map { String(decoding: $0, as: UTF8.self) }, closedBy: .server)
    }

    static func read(_ task: URLSessionWebSocketTask, link: WebSocketLink) async {
        while true {
            guard let message = try? await task.receive() else { return }
            link.sawFrame()
            let delivered: Bool
            switch message {
            case .string(let text): delivered = await link.received(text: text, bytes: text.utf8.count)
            case .data(let data): delivered = await link.received(binary: data)
            @unknown default: continue
            }
            guard delivered else { return }
        }
    }

    static func write(_ commands: AsyncStream<WebSocketCommand>, task: URLSessionWebSocketTask, link: WebSocketLink) async {
        for await command in commands {
            switch command {
            case .text(let text, let done):
                do { try await task.send(.string(text)); link.wrote(bytes: text.utf8.count); done(nil) } catch { done(error) }
            case .binary(let data, let done):
                do { try await task.send(.data(data)); link.wrote(bytes: data.count); done(nil) } catch { done(error) }
            case .ping(let id):
                task.sendPing { error in
                    if error == nil {
                        link.sawFrame()
                        link.pong(id)
                    }
                }
            case .close(let code, let reason):
                task.cancel(with: URLSessionWebSocketTask.CloseCode(rawValue: code) ?? .normalClosure, reason: reason.map { Data($0.utf8) })
                return
            }
        }
    }

    static func origin(of url: URL) -> String {
        "\(url.scheme?.lowercased() ?? "")://\(url.host?.lowercased() ?? ""):\(url.port ?? -1)"
    }

    /// The handshake's outcome, the subprotocol, and the refusal of redirects to another origin.
    final class Delegate: NSObject, URLSessionWebSocketDelegate, @unchecked Sendable {
        let origin: String
        let opened = OneShot()
        let subprotocol = Locked<String?>(nil)

        init(origin: String) { self.origin = origin }

        func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
            subprotocol.withLock { $0 = `protocol` }
            opened.resolve(true)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            opened.resolve(false)
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
        ) {
            let sameOrigin = request.url.map { URLSessionWebSocketTransport.origin(of: $0) == origin } ?? false
            completionHandler(sameOrigin ? request : nil)
        }
    }

    /// A Bool set once, awaited once.
    final class OneShot: @unchecked Sendable {
        private let state = Locked<(value: Bool?, waiter: CheckedContinuation<Bool, Never>?)>((nil, nil))

        func resolve(_ value: Bool) {
            let waiter = state.withLock { s -> CheckedContinuation<Bool, Never>? in
                guard s.value == nil else { return nil }
                s.value = value
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume(returning: value)
        }

        func wait() async -> Bool {
            await withCheckedContinuation { continuation in
                let value = state.withLock { s -> Bool? in
                    if s.value == nil { s.waiter = continuation }
                    return s.value
                }
                if let value { continuation.resume(returning: value) }
            }
        }
    }
}
#endif
