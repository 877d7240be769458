// What a client writes against comes with `import APITraceCapture`: the events its hooks and sinks
// see, their timestamps, and the file writer with its configuration and default folder. The rest
// of the format module (readers, scanners, gzip framing) is for tools that read traces:
// `import APITraceFormat` there.
@_exported import struct APITraceFormat.TraceEvent
@_exported import struct APITraceFormat.TraceTimestamp
@_exported import class APITraceFormat.TraceFileWriter
@_exported import enum APITraceFormat.TraceDirectory
