import APITraceAnalysis
import APITraceFormat

/// libFuzzer entry point: the input is the decompressed text of a trace file.
///
/// Every line goes through the typed decoder (`TraceLine.decode`) and the report's aggregator
/// (`TraceAggregator.add(line:)`), both built on the one line decoder (`TraceRecordScanner`; the
/// `line-decoder` target compares it with a reference parser); the aggregator then builds a summary and a
/// report, so numbers read from the lines (counts, durations, sample rates) reach the arithmetic
/// that uses them. Nothing here may trap, whatever the bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTraceLine(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    var aggregator = TraceAggregator()
    var start = 0
    while start <= size {
        var end = start
        while end < size, input[end] != 0x0A { end += 1 }
        let line = UnsafeRawBufferPointer(rebasing: input[start..<end])
        _ = try? TraceLine.decode(line)
        _ = aggregator.add(line: line)
        start = end + 1
    }
    let report = TraceReport(summary: aggregator.summary())
    _ = report.renderText()
    _ = report.renderJSON()
    return 0
}
