import APITraceFormat

/// libFuzzer entry point: the input is the text of one timestamp field.
///
/// Besides never trapping, a parsed instant must survive a round trip: its RFC 3339 text, parsed
/// again, names the same millisecond. A parser that accepts an instant the writer cannot print
/// (a year outside 0000...9999 after applying the offset) fails that check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTimestamp(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    guard let parsed = TraceTimestamp.parse(input) else { return 0 }
    let text = parsed.rfc3339
    guard let again = TraceTimestamp(rfc3339: text), again == parsed else {
        fatalError("round trip: \(String(decoding: input, as: UTF8.self).debugDescription) -> \(parsed.millisecondsSince1970) ms -> \(text) -> \(TraceTimestamp(rfc3339: text).map { "\($0.millisecondsSince1970) ms" } ?? "nil")")
    }
    return 0
}
