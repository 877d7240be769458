import APITraceFormat

/// libFuzzer entry point: the input is the text of one timestamp field, or of a time option.
///
/// The same text also goes through `TimeGrammar` (durations and instants of every command option
/// and rule), which must answer or refuse, never trap.
///
/// Besides never trapping, a parsed instant must survive a round trip: its RFC 3339 text, parsed
/// again, names the same millisecond. A parser that accepts an instant the writer cannot print
/// (a year outside 0000...9999 after applying the offset) fails that check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTimestamp(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let text = String(decoding: input, as: UTF8.self)
    if let ms = TimeGrammar.milliseconds(text), ms < 0 || ms > TimeGrammar.maximumMilliseconds {
        fatalError("duration \(text.debugDescription) -> \(ms) ms, outside 0...\(TimeGrammar.maximumMilliseconds)")
    }
    _ = TimeGrammar.instant(text, now: TraceTimestamp(millisecondsSince1970: 1_795_000_000_000))
    guard let parsed = TraceTimestamp.parse(input) else { return 0 }
    let printed = parsed.rfc3339
    guard let again = TraceTimestamp(rfc3339: printed), again == parsed else {
        fatalError("round trip: \(text.debugDescription) -> \(parsed.millisecondsSince1970) ms -> \(printed) -> \(TraceTimestamp(rfc3339: printed).map { "\($0.millisecondsSince1970) ms" } ?? "nil")")
    }
    return 0
}
