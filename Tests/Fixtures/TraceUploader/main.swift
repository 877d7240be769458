// A child process for the kill tests: uploads the finished files of DIR to URL until the folder
// is empty, printing "delivered NAME" per file, then "idle" and exits 0.
//
//   trace-uploader-fixture DIR URL TOKEN [PAUSE_MS]
//
// PAUSE_MS slows it down after each delivery, so a test can act while files are still pending
// however fast the machine is.
import APITraceFormat
import APITraceUpload
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 4 || arguments.count == 5, let url = URL(string: arguments[2]) else {
    FileHandle.standardError.write(Data("usage: trace-uploader-fixture DIR URL TOKEN [PAUSE_MS]\n".utf8))
    exit(64)
}
let pause = arguments.count == 5 ? UInt32(arguments[4]) ?? 0 : 0
let uploader = TraceUploader(configuration: .init(
    directory: arguments[1], endpoint: url, token: arguments[3], minimumFileAge: .zero, scanInterval: .milliseconds(50),
    retry: RetryPolicy(initial: .milliseconds(50), maximum: .milliseconds(400)),
    onEvent: { event in
        if case .delivered(let file, _, _) = event {
            FileHandle.standardOutput.write(Data("delivered \(file)\n".utf8))
            if pause > 0 { usleep(pause * 1000) }
        }
    }))
uploader.start()
while !uploader.pendingFiles().isEmpty { usleep(20_000) }
FileHandle.standardOutput.write(Data("idle\n".utf8))
exit(0)
