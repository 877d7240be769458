import APITraceFormat
import APITraceSSE
import Foundation
import Testing

@Suite("Printing events and connection changes")
struct ServerSentEventFormattingTests {
    @Test("the text block is an event stream that parses back to the same event", arguments: [
        ServerSentEvent(id: "42", type: "news", data: "first\nsecond"),
        ServerSentEvent(id: "", type: "message", data: ""),
        ServerSentEvent(id: "7", type: "ping", data: "trailing\n"),
    ])
    func textBlockRoundTrips(_ event: ServerSentEvent) {
        var parser = ServerSentEventParser()
        #expect(parser.push(Array(event.textBlock.utf8)) == [event])
    }

    @Test("the JSON line is one object that Foundation reads back")
    func jsonLine() throws {
        let event = ServerSentEvent(id: "1", type: "news", data: "quote \" backslash \\ line\nbreak \u{1F4F0}")
        let bytes = event.jsonLine
        #expect(bytes.last == 0x0A)
        #expect(!bytes.dropLast().contains(0x0A))
        let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: String]
        #expect(object == ["id": "1", "type": "news", "data": event.data])
    }

    @Test("connection changes read as sentences", arguments: [
        (TraceEvent.SSE(phase: .open, route: "/s", attempt: 1, status: 200, durationMs: 12.4), "connected to /s (attempt 1, HTTP 200, 12 ms)"),
        (TraceEvent.SSE(phase: .close, route: "/s", reason: "end_of_stream", status: 200, events: 17, durationMs: 60_000),
         "connection closed: end_of_stream after 17 events (60.00 s)"),
        (TraceEvent.SSE(phase: .reconnect, route: "/s", attempt: 2, delayMs: 1204, lastEventID: "42"),
         "reconnecting in 1.20 s (attempt 2, Last-Event-ID 42)"),
        (TraceEvent.SSE(phase: .close, route: "/s", reason: "http_status", status: 204, events: 0),
         "the server ended the stream for good (HTTP 204); not reconnecting"),
        (TraceEvent.SSE(phase: .fail, route: "/s", reason: "http_status", status: 500), "gave up: http_status (HTTP 500)"),
    ])
    func summary(_ event: TraceEvent.SSE, _ text: String) {
        #expect(event.summary == text)
    }
}
