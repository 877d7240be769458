import Foundation
import Logging

/// Sees the frames swift-websocket handles by itself: pongs and close frames never reach the
/// handler's inbound stream, and the library reports them only in its trace-level log line
/// (`Received WebSocketFrame(WebSocketOpcode.pong, flags: FIN, data: {length: 8, bytes: [ 00 ... ]})`).
///
/// This reads that line: the one way to measure ping round trips and to tell a silent peer from a
/// live one without a fork of the library. The tests against a real server pin the format (a change
/// shows up as pongs never seen and ping timeouts). It costs a formatted line per frame on the
/// event loop, never on the app's threads.
struct FrameTap: LogHandler {
    let link: WebSocketLink
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level == .trace else { return }
        let message = event.message.description
        guard message.hasPrefix("Received WebSocketFrame(") else { return }
        if message.hasPrefix("Received WebSocketFrame(WebSocketOpcode.pong,") {
            link.sawFrame()
            if let payload = Self.payload(of: message) { link.pong(payload) }
        } else {
            link.sawFrame(isClose: message.hasPrefix("Received WebSocketFrame(WebSocketOpcode.connectionClose,"))
        }
    }

    /// The first 8 payload bytes of a frame's log line, big-endian; `nil` for any other length.
    static func payload(of message: String) -> UInt64? {
        guard let open = message.range(of: "length: 8, bytes: ["), let close = message[open.upperBound...].firstIndex(of: "]")
        else { return nil }
        var value: UInt64 = 0
        var count = 0
        for hex in message[open.upperBound..<close].split(separator: " ") {
            guard let byte = UInt8(hex, radix: 16) else { return nil }
            value = value << 8 | UInt64(byte)
            count += 1
        }
        return count == 8 ? value : nil
    }
}
