import APITraceCapture
import APITraceFormat
import APITraceSSE
import Foundation

/// Prints `sse` connection changes to standard error for `apitrace listen`.
///
/// Unlike library sinks it writes at once: connection changes are rare, and a person is watching.
struct ConnectionLogSink: TraceSink {
    func record(_ event: TraceEvent) {
        guard case .sse(let sse) = event.payload else { return }
        FileHandle.standardError.write(Data("apitrace: \(sse.summary)\n".utf8))
    }
}
