import APITraceCapture
import ArgumentParser
import Dispatch
import Foundation
import Logging

extension Bench {
    /// Nanoseconds apitrace adds on the caller's thread per traced request and per `recordError`,
    /// next to a swift-log `Logger` writing to `SwiftLogNoOpLogHandler`.
    struct Capture: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "capture",
            abstract: "ns added per traced request and per recordError on the caller thread, with swift-log for scale."
        )

        @Option(help: "Timed calls per case.")
        var iterations = 200_000

        @Option(help: "Run only the cases whose name contains this text (for profiling).")
        var only: String?

        func validate() throws {
            guard iterations >= 1000 else { throw ValidationError("--iterations must be at least 1000") }
        }

        func run() throws {
            let directory = NSTemporaryDirectory() + "apitrace-bench-capture-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let writer = TraceFileWriter(configuration: .init(directory: directory))
            let iterations = self.iterations
            let only = self.only
            let results = runAsync { await CaptureCases(writer: writer, iterations: iterations, only: only).all() }
            writer.close()
            let stats = writer.statistics

            print("apitrace capture benchmark: \(iterations) timed calls per case, caller thread only, TraceFileWriter sink in a temp folder")
            print("case".padding(toLength: 62, withPad: " ", startingAt: 0) + "median ns".leftPadded(11) + "p99 ns".leftPadded(10))
            for result in results {
                print(result.name.padding(toLength: 62, withPad: " ", startingAt: 0) + String(result.median).leftPadded(11) + String(result.p99).leftPadded(10))
            }
            print("")
            if let bare = results.first(where: { $0.name.hasPrefix("bare") }), let traced = results.first(where: { $0.name.hasSuffix("route template") }) {
                print("added per traced request: median \(traced.median - bare.median) ns, p99 \(traced.p99 - bare.p99) ns (target: median < 1000 ns)")
            }
            if let lifecycle = results.first(where: { $0.name.hasPrefix("URLSession wrapper lifecycle") }), lifecycle.median > 0 {
                print("added per URLSession task (wrapper lifecycle): median \(lifecycle.median) ns (target: median < 1000 ns)")
            }
            if let span = results.first(where: { $0.name.hasPrefix("distributed-tracing span -> request") }),
               let noop = results.first(where: { $0.name.hasPrefix("distributed-tracing span, NoOpTracer") }), span.median > 0 {
                print("added per span through withSpan (RequestSpanTracer vs NoOpTracer): median \(span.median - noop.median) ns (target: median < 1000 ns)")
            }
            if let span = results.first(where: { $0.name.hasPrefix("AsyncHTTPClient span calls -> request") }),
               let noop = results.first(where: { $0.name.hasPrefix("AsyncHTTPClient span calls, NoOpTracer") }), span.median > 0 {
                print("added per AsyncHTTPClient request (RequestSpanTracer vs NoOpTracer): median \(span.median - noop.median) ns (target: median < 1000 ns)")
            }
            if let span = results.first(where: { $0.name.hasPrefix("sparse: AsyncHTTPClient span calls -> request") }),
               let noop = results.first(where: { $0.name.hasPrefix("sparse: AsyncHTTPClient span calls, NoOpTracer") }), span.median > 0 {
                print("added per AsyncHTTPClient request 100 µs apart (drain idle between): median \(span.median - noop.median) ns")
            }
            if let error = results.first(where: { $0.name.hasPrefix("recordError, unlimited") }),
               let noop = results.first(where: { $0.name.hasPrefix("swift-log critical") }), noop.median > 0 {
                print("recordError (written) / swift-log no-op call: \(String(format: "%.1f", Double(error.median) / Double(noop.median)))x")
            }
            print("writer: \(stats.appended) events appended, \(stats.written) written, \(stats.droppedBufferFull) dropped (buffer full), \(stats.droppedWriteFailed) dropped (write failed)")
        }
    }
}

/// Runs async work from the synchronous command and waits for it.
private func runAsync<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let semaphore = DispatchSemaphore(value: 0)
    let box = ResultBox<T>()
    Task {
        box.value = await body()
        semaphore.signal()
    }
    semaphore.wait()
    return box.value!
}

private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}

private extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
