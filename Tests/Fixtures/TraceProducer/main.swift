// A child process for the crash test: appends numbered events through TraceFileWriter until it is
// killed, printing the number of events appended so far to standard output as it goes.
//
//   trace-producer-fixture DIR FLUSH_INTERVAL_MS
import APITraceFormat
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3, let intervalMs = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: trace-producer-fixture DIR FLUSH_INTERVAL_MS\n".utf8))
    exit(64)
}
let writer = TraceFileWriter(configuration: .init(
    directory: arguments[1], producer: "crashtest", flushInterval: .milliseconds(intervalMs)))
var sequence = 0
while true {
    writer.append(TraceEvent(.log(.init(level: "info", message: "event \(sequence)", metadata: ["seq": String(sequence)]))))
    sequence += 1
    if sequence % 20 == 0 { FileHandle.standardOutput.write(Data("\(sequence)\n".utf8)) }
    usleep(1000)
}
