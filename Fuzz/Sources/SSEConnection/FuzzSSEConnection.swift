import APITraceSSE

/// libFuzzer entry point for the SSE client's connection handling: the bounded reading of a stream
/// that `EventSource` does per connection, fed arbitrary bytes in arbitrary chunks.
///
/// Byte 0 picks a chunk size (1-32), byte 1 the limits (a line of 1-16 bytes, an event of 1-64
/// bytes: small, so that inputs reach them), the rest is the body. As `EventSource` does, chunks are
/// pushed until the parser reports ``ServerSentEventParser/LimitExceeded``, then the stream is finished
/// and a second one starts. Differential: the result must equal that of `ReferenceReader`, a plain
/// line-by-line reading of the WHATWG rules with the same limits, written separately below: same
/// events, same last event id and reconnection time, same limit broken (or none).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSSEConnection(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 1 else { return 0 }
    let chunkSize = Int(data[0] % 32) + 1
    let limits = ServerSentEventParser.Limits(
        maximumLineBytes: Int(data[1] & 0x0F) + 1, maximumEventBytes: Int(data[1] >> 2) + 1)
    let body = Array(UnsafeBufferPointer(start: data + 2, count: size - 2))

    var parser = ServerSentEventParser(limits: limits)
    var events: [ServerSentEvent] = []
    var start = 0
    while start < body.count, parser.limitExceeded == nil {
        let end = min(body.count, start + chunkSize)
        events += parser.push(Array(body[start..<end]))
        start = end
    }
    let exceeded = parser.limitExceeded?.kind.description
    // Once a limit is broken the rest of the stream is ignored, as the connection is dropped.
    let afterLimit = exceeded == nil ? [] : parser.push(body)

    var reference = ReferenceReader(limits: limits)
    reference.read(body)

    guard events == reference.events, afterLimit.isEmpty,
          parser.lastEventID == reference.lastEventID, parser.reconnectionTime == reference.reconnectionTime,
          exceeded == reference.exceeded, events.allSatisfy({ $0.data.utf8.count <= 3 * limits.maximumEventBytes })
    else {
        fatalError("""
            chunks of \(chunkSize), limits \(limits.maximumLineBytes)/\(limits.maximumEventBytes): \
            \(events.count) events, limit \(exceeded ?? "none"); reference \(reference.events.count) events, \
            limit \(reference.exceeded ?? "none")
            """)
    }

    // The next connection starts clean, with the last event id kept.
    parser.finishStream()
    let next = parser.push(Array("data: x\n\n".utf8))
    let expected = limits.maximumLineBytes < 7 ? [] : [ServerSentEvent(id: reference.lastEventID, data: "x")]
    guard next == expected else { fatalError("the stream after finishStream() does not start clean") }
    return 0
}

/// The WHATWG event-stream interpretation, one complete body at a time, as plainly as possible:
/// split into lines first, then apply each rule, stopping at the first line or event past a limit.
struct ReferenceReader {
    let limits: ServerSentEventParser.Limits
    var events: [ServerSentEvent] = []
    var lastEventID = ""
    var reconnectionTime: Int?
    var exceeded: String?

    private var data: [UInt8] = []
    private var type: [UInt8] = []
    private var pendingID: [UInt8]?

    init(limits: ServerSentEventParser.Limits) { self.limits = limits }

    mutating func read(_ input: [UInt8]) {
        // A stream that so far holds only the start of its byte-order mark (EF, EF BB) is held by the
        // client until the mark is complete or refuted: not yet a line, so no limit is broken. Only
        // the stream's first mark is special; after it, the same bytes are text.
        if input.count < 3, !input.isEmpty, [0xEF, 0xBB, 0xBF].starts(with: input) { return }
        var body = input[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        var line: [UInt8] = []
        var index = body.startIndex
        while index < body.endIndex {
            let byte = body[index]
            index += 1
            if byte == 0x0A || byte == 0x0D {
                if byte == 0x0D, index < body.endIndex, body[index] == 0x0A { index += 1 }
                if line.count > limits.maximumLineBytes { exceeded = "line_too_long"; return }
                process(line)
                if exceeded != nil { return }
                line = []
            } else {
                line.append(byte)
            }
        }
        // An unfinished line is never processed, but holding it must not break the line limit either.
        if line.count > limits.maximumLineBytes { exceeded = "line_too_long" }
    }

    private mutating func process(_ line: [UInt8]) {
        if line.isEmpty { return dispatch() }
        if line[0] == 0x3A { return }
        let colon = line.firstIndex(of: 0x3A)
        let name = Array(line[..<(colon ?? line.count)])
        var value = colon.map { Array(line[($0 + 1)...]) } ?? []
        if value.first == 0x20 { value.removeFirst() }
        switch String(decoding: name, as: UTF8.self) {
        case "data" where name.count == 4:
            if data.count + value.count > limits.maximumEventBytes { exceeded = "event_too_large"; return }
            data += value + [0x0A]
        case "event" where name.count == 5:
            type = value
        case "id" where name.count == 2:
            if !value.contains(0) { pendingID = value }
        case "retry" where name.count == 5:
            if !value.isEmpty, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                var total = 0
                for digit in value {
                    let (times10, o1) = total.multipliedReportingOverflow(by: 10)
                    let (sum, o2) = times10.addingReportingOverflow(Int(digit - 0x30))
                    total = o1 || o2 ? Int.max : sum
                }
                reconnectionTime = total
            }
        default:
            break
        }
    }

    private mutating func dispatch() {
        if let id = pendingID {
            lastEventID = String(decoding: id, as: UTF8.self)
            pendingID = nil
        }
        defer { data = []; type = [] }
        guard !data.isEmpty else { return }
        events.append(ServerSentEvent(
            id: lastEventID, type: type.isEmpty ? "message" : String(decoding: type, as: UTF8.self),
            data: String(decoding: data.dropLast(), as: UTF8.self)))
    }
}
