/// One event dispatched from a Server-Sent Events stream.
///
/// ```swift
/// for try await event in source.events() {
///     print(event.id, event.type, event.data)
/// }
/// ```
public struct ServerSentEvent: Sendable, Hashable {
    /// The stream's last event id when this event was dispatched (the `lastEventId` of a browser's
    /// `MessageEvent`). It persists across events: an event without an `id` field keeps the previous one.
    /// Empty when the server never sent an id.
    public var id: String
    /// The event type from the `event` field; `message` when the event had none.
    public var type: String
    /// The `data` fields joined with line feeds.
    public var data: String

    /// Creates an event.
    public init(id: String = "", type: String = "message", data: String) {
        self.id = id
        self.type = type
        self.data = data
    }
}
