/// What an ``EventSource`` is doing, as a browser's `readyState`.
///
/// The client only says ``open`` between a 200 `text/event-stream` response and the end of that
/// connection: after a drop it says ``connecting`` at once, after a final failure ``closed``.
public enum EventSourceState: String, Sendable, Hashable, CustomStringConvertible {
    /// Connecting or waiting to reconnect.
    case connecting
    /// Connected: events are flowing.
    case open
    /// Not started yet, or stopped for good (``EventSource/close()``, HTTP 204, or a failure).
    case closed

    public var description: String { rawValue }
}
