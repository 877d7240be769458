// A child process for the kill tests: uploads the finished files of DIR to URL until the folder
// is empty, printing "delivered NAME" per file, then "idle" and exits 0.
//
//   trace-uploader-fixture DIR URL TOKEN
import APITraceFormat
import APITraceUpload
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 4, let url = URL(string: arguments[2]) else {
    FileHandle.standardError.write(Data("usage: trace-uploader-fixture DIR URL TOKEN\n".utf8))
    exit(64)
}
let uploader = TraceUploader(configuration: .init(
    directory: arguments[1], endpoint: url, token: arguments[3], minimumFileAge: .zero, scanInterval: .milliseconds(50),
    retry: RetryPolicy(initial: .milliseconds(50), maximum: .milliseconds(400)),
    onEvent: { event in
        if case .delivered(let file, _, _) = event {
            FileHandle.standardOutput.write(Data("delivered \(file)\n".utf8))
        }
    }))
uploader.start()
while !uploader.pendingFiles().isEmpty { usleep(20_000) }
FileHandle.standardOutput.write(Data("idle\n".utf8))
exit(0)
