import APITraceAnalysis
import APITraceFormat
import ArgumentParser
import Foundation

extension APITrace {
    /// `apitrace report`: summarizes trace files.
    struct Report: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "report",
            abstract: "Summarize trace files: traffic, errors by route, latency, decode failures, SSE, over time.",
            discussion: """
                Reads .jsonl.gz and .jsonl files and folders of them (recursively); with no path, the default \
                trace folder ($APITRACE_DIR, else ~/.local/state/apitrace/traces). An error is a transport \
                failure or a 5xx; 4xx are client errors and decode failures are counted apart \
                (--include-decode-failures counts them as errors). Percentiles are within 0.78 % of exact.
                Summaries of finished files are cached (--cache-dir) so a re-run reads only new or changed \
                files; the output is the same with or without the cache (--no-cache reads everything).
                Exit status: 0 when a report was produced (even with warnings), 1 when no usable trace file \
                was read, 64 for bad arguments. See Docs/report.md.
                """
        )

        @Argument(help: "Trace files or folders (default: the default trace folder).")
        var paths: [String] = []

        @OptionGroup(title: "Filters")
        var filters: TraceFilterOptions

        @Option(help: "Output format: text, json, markdown or html.")
        var format: String = "text"

        @Option(name: .shortAndLong, help: "Write the report to this file instead of standard output.")
        var output: String?

        @Option(help: "Time-series bucket width, such as 1m, 15m, 1h (default: chosen from the span).")
        var bucket: String?

        @Flag(help: "Count decode failures as errors.")
        var includeDecodeFailures = false

        @Option(help: "Error identities listed.")
        var topErrors = 10

        @Option(help: "Add a breakdown by this dimension; app_version (the files' header app_version) is the one there is.")
        var by: [String] = []

        @Flag(help: "Read every file; neither use nor update the cache of per-file summaries.")
        var noCache = false

        @Option(help: "Folder of the per-file summary cache (default: $APITRACE_CACHE_DIR, else $XDG_CACHE_HOME/apitrace/report, else ~/.cache/apitrace/report).")
        var cacheDir: String?

        @Option(help: ArgumentHelp(
            "Compare against this baseline and rank what accounts for the extra failures: a duration (24h: the span right before the window), FROM..UNTIL, or app_version=V.",
            valueName: "baseline"))
        var baseline: String?

        @Option(help: ArgumentHelp(
            "The window compared with --baseline (default: what the filters select): a duration back from --until or now, FROM..UNTIL, or app_version=V.",
            valueName: "window"))
        var compare: String?

        @Option(help: "Rows listed per dimension in the comparison.")
        var compareRows = 5

        func validate() throws {
            if compare != nil && baseline == nil {
                throw ValidationError("--compare \(compare!): also give --baseline, what the window is compared against (24h, FROM..UNTIL or app_version=V).")
            }
            if compareRows < 1 { throw ValidationError("--compare-rows must be 1 or more.") }
            if let baseline {
                do { _ = try ComparisonWindows(report: try filters.filter(), compare: compare, baseline: baseline) } catch {
                    throw ValidationError("\(error)")
                }
            }
            guard ReportFormat(rawValue: format) != nil else {
                throw ValidationError("--format \(format): use one of text, json, markdown, html.")
            }
            if let bucket, parsedBucket(bucket) == nil {
                throw ValidationError("--bucket \(bucket): use a duration of whole seconds such as 30s, 5m, 1h, 1d.")
            }
            if topErrors < 0 { throw ValidationError("--top-errors must be 0 or more.") }
            for dimension in by where dimension != "app_version" {
                throw ValidationError("--by \(dimension): the breakdown there is is app_version.")
            }
        }

        func run() throws {
            let format = ReportFormat(rawValue: format)!
            var sources = paths
            if sources.isEmpty {
                sources = [TraceDirectory.default]
                FileHandle.standardError.write(Data("apitrace: no path given; reading the default trace folder \(sources[0])\n".utf8))
            }
            let bucketSeconds = bucket.flatMap(parsedBucket)
            let filter = try filters.filter()
            let cache = noCache ? nil : TraceSummaryCache(directory: cacheDir ?? TraceSummaryCache.defaultDirectory)
            let summarizer = TraceSummarizer(filter: filter, timeSeriesGranularity: bucketSeconds ?? 1, cache: cache)
            let progress = ProgressLine()
            let summary = summarizer.summarize(paths: sources) { done, total in progress.update("read \(done) of \(total) files") }
            progress.finish()
            for problem in cache?.problems ?? [] { FileHandle.standardError.write(Data("apitrace: warning: \(problem)\n".utf8)) }

            var report = TraceReport(summary: summary, options: .init(
                sources: sources, includeDecodeFailures: includeDecodeFailures, bucketSeconds: bucketSeconds, topErrors: topErrors,
                byAppVersion: by.contains("app_version")))
            guard summary.filesRead + summary.filesFiltered > 0 else {
                for warning in report.input.warnings { FileHandle.standardError.write(Data("apitrace: \(warning)\n".utf8)) }
                FileHandle.standardError.write(Data("apitrace: no usable trace file in \(sources.joined(separator: ", "))\n".utf8))
                throw ExitCode(1)
            }
            if let baseline {
                let windows = try ComparisonWindows(report: filter, compare: compare, baseline: baseline)
                let read = FailureComparisonCounts.read(paths: sources, windows: windows)
                report.comparison = .init(window: windows.windowDescription, baseline: windows.baselineDescription,
                                          result: FailureComparison(read.counts, limit: compareRows))
            }
            let toTerminal = output == nil && isatty(1) == 1
            if !(format == .text && toTerminal) {
                for warning in report.input.warnings { FileHandle.standardError.write(Data("apitrace: warning: \(warning)\n".utf8)) }
            }
            let colors = format == .text && toTerminal && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
            let text = report.render(format, colors: colors)
            if let output {
                do { try AtomicFileWriter.write(text.utf8, to: output, permissions: 0o666) } catch {
                    FileHandle.standardError.write(Data("apitrace: \(error)\n".utf8))
                    throw ExitCode(1)
                }
            } else {
                let stdout = StandardOutput()
                stdout.write(text)
                stdout.flush()
            }
        }

        private func parsedBucket(_ text: String) -> Int64? {
            guard let ms = TraceFilter.parseDuration(text), ms >= 1000, ms % 1000 == 0 else { return nil }
            return ms / 1000
        }
    }
}

/// A one-line progress indicator on standard error, shown only when it is a terminal and the run
/// has lasted more than a second.
final class ProgressLine: Sendable {
    private let enabled = isatty(2) == 1
    private let started = Date()
    /// Whether a line was shown. Each line is one small write, so lines of two threads do not mix
    /// and no write happens under the lock.
    private let shown = Locked(false)

    func update(_ text: String) {
        guard enabled, Date().timeIntervalSince(started) > 1 else { return }
        shown.withLock { $0 = true }
        FileHandle.standardError.write(Data("\r\u{1B}[2K\(text)".utf8))
    }

    func finish() {
        if shown.withLock({ $0 }) { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
    }
}
