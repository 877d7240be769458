import APITraceFormat
import ArgumentParser
import Foundation

/// `apitrace-bench otlp`: `apitrace export --format otlp` to a local OTLP/HTTP receiver against
/// `gzip -dc` on the report benchmark's files: time, events per second and bytes on the wire.
struct OTLPBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "otlp",
        abstract: "Time apitrace export --format otlp (protobuf and JSON, gzip; and protobuf gzipped by zlib) to a local receiver against gzip -dc on the same files.",
        discussion: """
            Uses (and generates once) the trace of `apitrace-bench report`. The receiver (Python, 127.0.0.1) reads \
            each body and answers 200 without decoding, counting the bytes that arrive. Rounds interleave the \
            contenders; the best of --runs is reported, with the CPU time of that run (user and system) and, \
            where /proc is there, the receiver's own CPU time for it. Target: the protobuf export within 2x of gzip -dc.
            """
    )

    @OptionGroup var trace: GeneratedTraceOptions

    static let receiver = #"""
import sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
count_path = sys.argv[1]
lock = threading.Lock()
total = [0]
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        remaining = n
        while remaining > 0:
            chunk = self.rfile.read(min(remaining, 1 << 20))
            if not chunk: break
            remaining -= len(chunk)
        with lock:
            total[0] += n
            with open(count_path, "w") as f: f.write(str(total[0]))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""#

    func run() throws {
        let report = try ReportBenchmark.parse(trace.arguments)
        let folder = "\(trace.cache)/report-g2-\(trace.events)-\(trace.files)"
        let paths = try report.prepare(folder)
        let decompressed = paths.reduce(0) { $0 + TraceFileReader(path: $1).forEachRawLine { _, _ in true }.bytes }
        let compressed = paths.reduce(0) { $0 + Int(FileStatus(path: $1)?.size ?? 0) }
        print("trace: \(paths.count) files, \(trace.events) events, \(report.mb(decompressed)) MB JSON, \(report.mb(compressed)) MB gzip, in \(folder)")
        print("cores: \(ProcessInfo.processInfo.activeProcessorCount), load average: \(report.loadAverage())")
        let apitrace = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("apitrace").path
        guard FileManager.default.isExecutableFile(atPath: apitrace) else {
            throw ValidationError("build the CLI first: swift build -c release --product apitrace")
        }
        let countFile = NSTemporaryDirectory() + "apitrace-bench-otlp-\(getpid())"
        let receiver = Process()
        receiver.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        receiver.arguments = ["python3", "-c", Self.receiver, countFile]
        let out = Pipe()
        receiver.standardOutput = out
        try receiver.run()
        defer { receiver.terminate() }
        var portText = ""
        while !portText.hasSuffix("\n") {
            let byte = out.fileHandleForReading.readData(ofLength: 1)
            guard !byte.isEmpty else { throw ValidationError("the receiver did not start") }
            portText += String(decoding: byte, as: UTF8.self)
        }
        let endpoint = "http://127.0.0.1:\(portText.trimmingCharacters(in: .whitespacesAndNewlines))"
        func received() -> Int { Int((try? String(contentsOfFile: countFile, encoding: .utf8)) ?? "0") ?? 0 }
        let contenders: [(String, [String])] = [
            ("gzip -dc", ["/bin/sh", "-c", "gzip -dc " + paths.map(report.shellQuoted).joined(separator: " ")]),
            ("export otlp (protobuf, gzip)", [apitrace, "export", "--format", "otlp", "--endpoint", endpoint] + paths),
            ("export otlp (json, gzip)", [apitrace, "export", "--format", "otlp", "--otlp-protocol", "http/json", "--endpoint", endpoint] + paths),
            // Bodies gzipped by zlib even where libdeflate is installed (GzipDeflater.compressWhole).
            ("export otlp (protobuf, zlib)", ["/usr/bin/env", "APITRACE_GZIP=zlib", apitrace, "export", "--format", "otlp", "--endpoint", endpoint] + paths),
        ]
        var best = [Double](repeating: .infinity, count: contenders.count)
        var cpu = [Double](repeating: 0, count: contenders.count)
        var receiverCPU = [Double?](repeating: nil, count: contenders.count)
        var wire = [Int](repeating: 0, count: contenders.count)
        for round in 1...max(1, trace.runs) {
            for (i, contender) in contenders.enumerated() {
                let before = received()
                let receiverBefore = Self.cpuSeconds(of: receiver.processIdentifier)
                let result = report.child(contender.1)
                guard result.status == 0 else { throw ValidationError("\(contender.0) exited with \(result.status)") }
                if result.seconds < best[i] {
                    best[i] = result.seconds
                    cpu[i] = result.cpu
                    receiverCPU[i] = Self.cpuSeconds(of: receiver.processIdentifier).flatMap { after in receiverBefore.map { after - $0 } }
                }
                wire[i] = received() - before
            }
            print("round \(round) of \(trace.runs) done (load average \(report.loadAverage()))")
        }
        for (i, contender) in contenders.enumerated() {
            let wireText = i == 0 ? String(format: "%8.1f MB out", Double(decompressed) / 1e6) : String(format: "%8.1f MB on the wire", Double(wire[i]) / 1e6)
            print(contender.0.padding(toLength: 30, withPad: " ", startingAt: 0)
                + String(format: "%7.3f s  %9.0f events/s  ", best[i], Double(trace.events) / best[i]) + wireText
                + String(format: "  %.2fx gzip -dc  cpu %.2f s", best[i] / best[0], cpu[i])
                + (receiverCPU[i].map { String(format: " (receiver %.2f s)", $0) } ?? ""))
        }
        print("gzip of the bodies: " + (LibDeflate.shared == nil ? "zlib (libdeflate.so.0 not found, or APITRACE_GZIP=zlib)" : "libdeflate, found at run time; the last row keeps zlib"))
        let ratio = best[1] / best[0]
        print(String(format: "export otlp / gzip -dc: %.2fx (target <= 2x)%@", ratio, ratio <= 2 ? "  ok" : "  MISSED"))
    }

    /// User plus system CPU seconds a process used so far, from `/proc/<pid>/stat` (nil where there is none).
    static func cpuSeconds(of pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // Fields after the command's closing parenthesis: state is the 3rd field, utime the 14th, stime the 15th.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / 100  // USER_HZ: 100 on every Linux ABI
    }
}
