import APITraceSSE

/// libFuzzer entry point: the input is an event-stream body, preceded by one byte that picks how
/// the body is cut into chunks.
///
/// The parser must give the same events, last event id and reconnection time whether the body
/// arrives whole or in chunks split anywhere (inside a line, between CR and LF, inside the BOM).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSSEParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let chunkSize = Int(data[0] % 16) + 1
    let body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))

    var whole = ServerSentEventParser()
    let wholeEvents = whole.push(body)
    whole.finishStream()

    var chunked = ServerSentEventParser()
    var chunkedEvents: [ServerSentEvent] = []
    var start = 0
    while start < body.count {
        let end = min(body.count, start + chunkSize)
        chunkedEvents += chunked.push(Array(body[start..<end]))
        start = end
    }
    chunked.finishStream()

    guard wholeEvents == chunkedEvents,
          whole.lastEventID == chunked.lastEventID,
          whole.reconnectionTime == chunked.reconnectionTime
    else {
        fatalError("chunks of \(chunkSize) bytes change the result: \(wholeEvents.count) events whole, \(chunkedEvents.count) chunked")
    }
    return 0
}
