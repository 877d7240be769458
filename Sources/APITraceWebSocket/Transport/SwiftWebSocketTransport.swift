import APITraceFormat
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOWebSocket
import WSClient

/// The transport on swift-websocket's `WebSocketClient` (SwiftNIO): the one that works on Linux,
/// and on Apple platforms when the app prefers it.
///
/// What it cannot report: the HTTP status of a refused handshake, and the negotiated subprotocol
/// (the library neither offers nor reads `Sec-WebSocket-Protocol` beyond the headers the app adds).
/// It follows no redirect, so credentials never leave the configured origin.
struct SwiftWebSocketTransport: WebSocketTransport {
    func connect(_ request: WebSocketRequest, link: WebSocketLink) async -> WebSocketAttemptEnd {
        var fields = HTTPFields()
        for header in request.headers {
            if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
        }
        if !request.subprotocols.isEmpty {
            fields.append(HTTPField(name: HTTPField.Name("Sec-WebSocket-Protocol")!, value: request.subprotocols.joined(separator: ", ")))
        }
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: request.maximumFrameSize, additionalHeaders: fields, closeTimeout: request.closeTimeout,
            autoPing: .disabled, validateUTF8: false)
        let logger = Logger(label: "apitrace.websocket") { _ in FrameTap(link: link) }
        let client = WebSocketClient(url: request.url.absoluteString, configuration: configuration, logger: logger) { inbound, outbound, _ in
            link.opened(WebSocketHandshake(attempt: link.number))
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await Self.write(link.commands, to: outbound, link: link) }
                await Self.read(inbound, outbound: outbound, link: link)
                group.cancelAll()
            }
        }
        let closeFrame: WebSocketCloseFrame?
        do {
            closeFrame = try await client.run()
        } catch {
            let opened = link.stats.withLock { $0.openedAt != nil }
            guard opened else {
                let refused = (error as? WebSocketClientError) == .webSocketUpgradeFailed
                return .notOpened(reason: refused ? "refused" : "network_error", status: nil)
            }
            if case NIOWebSocketError.invalidFrameLength = error {
                // NIO's decoder refused a frame over the limit and already sent 1009.
                link.clientClosing(code: 1009, reason: "message_too_big")
            }
            closeFrame = nil
        }
        return Self.end(closeFrame: closeFrame, link: link)
    }

    /// Who ended the connection and with which code, from what the client did and what it received.
    static func end(closeFrame: WebSocketCloseFrame?, link: WebSocketLink) -> WebSocketAttemptEnd {
        let stats = link.stats.withLock { $0 }
        if let clientClose = stats.clientClose {
            return .closed(code: clientClose.code, reason: clientClose.reason, closedBy: .client)
        }
        if stats.abortReason != nil {
            return .closed(code: 1006, reason: nil, closedBy: .client)
        }
        if let closeFrame {
            return .closed(code: Int(UInt16(webSocketErrorCode: closeFrame.closeCode)), reason: closeFrame.reason, closedBy: .server)
        }
        if stats.sawCloseFrame { return .closed(code: 1005, reason: nil, closedBy: .server) }
        return .closed(code: 1006, reason: nil, closedBy: .network)
    }

    /// Reads frames into whole messages no larger than the link's limit, until the peer closes.
    static func read(_ inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, link: WebSocketLink) async {
        var message = ByteBuffer()
        var messageIsText: Bool?
        do {
            for try await frame in inbound {
                switch frame.opcode {
                case .text, .binary:
                    guard messageIsText == nil else { return await fail(1002, "protocol_error", outbound, link) }
                    messageIsText = frame.opcode == .text
                    message.clear()
                case .continuation:
                    guard messageIsText != nil else { return await fail(1002, "protocol_error", outbound, link) }
                }
                guard message.readableBytes + frame.data.readableBytes <= link.maximumMessageSize else {
                    return await fail(1009, "message_too_big", outbound, link)
                }
                var data = frame.data
                message.writeBuffer(&data)
                guard frame.fin, let isText = messageIsText else { continue }
                messageIsText = nil
                let size = message.readableBytes
                let delivered: Bool
                if isText {
                    guard let text = String(validating: message.readableBytesView, as: UTF8.self) else {
                        return await fail(1007, "invalid_data", outbound, link)
                    }
                    delivered = await link.received(text: text, bytes: size)
                } else {
                    delivered = await link.received(binary: Data(message.readableBytesView))
                }
                message = ByteBuffer()
                guard delivered else { return }
            }
        } catch {
            if case NIOWebSocketError.invalidFrameLength = error {
                link.clientClosing(code: 1009, reason: "message_too_big")
            }
        }
    }

    private static func fail(_ code: Int, _ reason: String, _ outbound: WebSocketOutboundWriter, _ link: WebSocketLink) async {
        link.clientClosing(code: code, reason: reason)
        try? await outbound.close(WebSocketErrorCode(codeNumber: code), reason: nil)
    }

    /// Writes the app's messages, pings and close, counting what went out.
    static func write(_ commands: AsyncStream<WebSocketCommand>, to outbound: WebSocketOutboundWriter, link: WebSocketLink) async {
        for await command in commands {
            switch command {
            case .text(let text, let done):
                do {
                    try await outbound.writeTextMessage(text)
                    link.wrote(bytes: text.utf8.count)
                    done(nil)
                } catch {
                    done(error)
                }
            case .binary(let data, let done):
                do {
                    try await outbound.writeBinaryMessage(ByteBuffer(bytes: data))
                    link.wrote(bytes: data.count)
                    done(nil)
                } catch {
                    done(error)
                }
            case .ping(let id):
                var payload = ByteBuffer()
                payload.writeInteger(id)
                try? await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .ping, data: payload)))
            case .close(let code, let reason):
                try? await outbound.close(WebSocketErrorCode(codeNumber: code), reason: reason)
                return
            }
        }
    }
}
