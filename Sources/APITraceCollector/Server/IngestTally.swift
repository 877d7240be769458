import APITraceExport
import APITraceFormat

/// The metrics of one upload, counted in the pass that checks it (``UploadValidator``) from the
/// bytes that pass inflates anyway, and added to ``IngestMetrics`` only once the upload is stored.
///
/// Lines are read by the rules every reader of traces follows (``TraceRecordStream``): a cut
/// body's incomplete last line is not read, so a salvaged file counts the complete lines it keeps;
/// a refused body's tally is dropped, so it counts nothing however far it was read.
final class IngestTally {
    private let stream = TraceRecordStream(name: "upload")
    private var tally: OpenMetricsExporter.FileTally
    private var scan: TraceFileReader.RecordScan?

    init(limits: OpenMetricsExporter.Limits) {
        tally = OpenMetricsExporter.FileTally(limits: limits)
    }

    /// Reads the complete lines of a block of the body's decompressed bytes.
    func take(_ block: UnsafeRawBufferPointer) {
        stream.feed(block, header: { header, _ in
            self.tally.begin(header: header)
            return true
        }) { record, _, _ in
            self.tally.add(record)
            return true
        }
    }

    /// Ends reading; what is left (an incomplete last line) is not counted.
    func finish() {
        scan = stream.finish()
    }

    /// The counts of the upload's lines, once ``finish()`` was called.
    var counted: (tally: OpenMetricsExporter.FileTally, scan: TraceFileReader.RecordScan) {
        (tally, scan ?? stream.finish())
    }
}
