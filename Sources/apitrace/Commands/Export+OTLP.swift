import APITraceAnalysis
import APITraceExport
import APITraceFormat
import ArgumentParser
import Foundation

extension APITrace.Export {
    /// `export --format otlp`: sends (or, with --output, writes) the events not exported before.
    func runOTLP() throws {
        let filter = try filters.filter()
        let sources = paths.isEmpty ? [TraceDirectory.default] : paths
        func fail(_ message: String) -> ExitCode {
            FileHandle.standardError.write(Data("apitrace: \(message)\n".utf8))
            return ExitCode(1)
        }
        let stateSelection = "otlp " + selection
        var cumulative = CumulativeExport(selection: stateSelection)
        if let state {
            do { cumulative = try CumulativeExport.load(path: state, selection: stateSelection) } catch { throw fail("\(error)") }
        }
        let sessionPattern = sessionPattern
        // Without a condition on events, none is asked: the export then reads lines without making events.
        let reader = TraceExportReader(
            since: filter.since, until: filter.until, keepFile: filter.matches(header:),
            keepEvent: filter.keepsEveryRequest && sessionPattern == nil
                ? nil : { filter.matches($0) && TextPattern.admits(sessionPattern, $0.session) })
        var saveError: String?
        let commit: (CumulativeExport) -> Void = { current in
            guard let state else { return }
            do { try current.save(path: state) } catch { saveError = "\(error)" }
        }
        let outcome: OTLPExport.Outcome
        var written = Data()
        if let output {
            // Nothing sent: each request as one OTLP JSON line, as the Collector's file exporter writes them.
            let export = OTLPExport(encoding: .json, batchSize: batchSize, commit: commit) { _, payload in
                written.append(contentsOf: payload)
                written.append(UInt8(ascii: "\n"))
                return .sent(attempts: 1, bytesOnWire: payload.count)
            }
            outcome = export.run(reader, sources, state: &cumulative)
            do { try written.write(to: URL(fileURLWithPath: output), options: .atomic) } catch {
                throw fail("cannot write \(output): \(error.localizedDescription)")
            }
        } else {
            let endpoint: OTLPEndpoint
            do {
                endpoint = try OTLPEndpoint.configure(endpoint: self.endpoint, encoding: otlpProtocol.flatMap(OTLPEndpoint.Encoding.init(rawValue:)))
            } catch { throw fail("\(error)") }
            let sender = OTLPSender(endpoint: endpoint)
            var export = OTLPExport(encoding: endpoint.encoding, batchSize: batchSize, commit: commit) { signal, body in
                sender.send(body: body, signal: signal)
            }
            // Bodies are gzipped on the reading threads: the sending threads only send, a file each at once.
            export.prepare = { try sender.body($0) }
            export.sendingLanes = export.readingThreads
            outcome = export.run(reader, sources, state: &cumulative)
        }
        for warning in outcome.read.warnings.map(\.description) { FileHandle.standardError.write(Data("apitrace: warning: \(warning)\n".utf8)) }
        if let saveError { throw fail(saveError) }
        guard outcome.read.usableFiles > 0 || outcome.failure != nil else {
            throw fail("no usable trace file in \(sources.joined(separator: ", "))")
        }
        if let state, outcome.failure == nil {
            cumulative.forgetFiles(notIn: Set(outcome.read.filesFound))
            do { try cumulative.save(path: state) } catch { throw fail("\(error)") }
        }
        let summary = "apitrace: otlp: \(outcome.spans) spans, \(outcome.logs) log records in \(outcome.requests) requests (\(outcome.bytesOnWire) bytes)\n"
        FileHandle.standardError.write(Data(summary.utf8))
        if let failure = outcome.failure {
            throw fail("stopped: \(failure); what was accepted is marked in the state, the rest goes on the next run")
        }
    }
}
