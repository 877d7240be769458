import APITraceFormat

extension ServerSentEvent {
    /// The event as an event-stream block (`id:`, `event:`, one `data:` per line, an empty line):
    /// what `apitrace listen --format text` prints. `id` is left out when empty.
    ///
    /// ```text
    /// id: 42
    /// event: news
    /// data: first line
    /// data: second line
    ///
    /// ```
    public var textBlock: String {
        var text = ""
        if !id.isEmpty { text += "id: \(id)\n" }
        text += "event: \(type)\n"
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        return text + "\n"
    }

    /// The event as one JSON object and a line feed: `{"id":"42","type":"news","data":"..."}`.
    public var jsonLine: [UInt8] {
        var out = JSONOutput()
        out.beginObject()
        out.field("id", id)
        out.field("type", type)
        out.field("data", data)
        out.endObject()
        out.bytes.append(0x0A)
        return out.bytes
    }
}
