package import APITraceExport
package import APITraceFormat

/// The metrics of one upload, counted in the pass that checks it (``UploadValidator``) from the
/// bytes that pass inflates anyway, and added to ``IngestMetrics`` only once the upload is stored.
///
/// Lines are read by the rules every reader of traces follows (``TraceRecordStream``): a cut
/// body's incomplete last line is not read, so a salvaged file counts the complete lines it keeps;
/// a refused body's tally is dropped, so it counts nothing however far it was read.
package final class IngestTally {
    /// Counting reads a dozen fields of a line, so lines are read for their counted fields
    /// (``TraceRecordStream/feed(_:header:counted:)``: a lean reader, the full one for lines it declines).
    private let stream = TraceRecordStream(name: "upload")
    /// Taken out while a block is read: a class's stored property is checked for exclusive access at
    /// run time on every use, which per line cost a good part of counting it.
    private var tally: OpenMetricsExporter.FileTally?
    private var scan: TraceFileReader.RecordScan?

    package init(limits: OpenMetricsExporter.Limits) {
        tally = OpenMetricsExporter.FileTally(limits: limits)
    }

    /// Reads the complete lines of a block of the body's decompressed bytes.
    func take(_ block: UnsafeRawBufferPointer) {
        var tally = self.tally!
        self.tally = nil
        defer { self.tally = tally }
        var header: TraceFileHeader?
        stream.feed(block, header: { read, _ in
            header = read
            return true
        }, counted: { record in
            tally.add(record)
            return true
        })
        // Only names the app version the tally's series are added under, so after the lines is the same.
        if let header { tally.begin(header: header) }
    }

    /// Ends reading; what is left (an incomplete last line) is not counted.
    func finish() {
        scan = stream.finish()
    }

    /// The counts of the upload's lines, once ``finish()`` was called.
    package var counted: (tally: OpenMetricsExporter.FileTally, scan: TraceFileReader.RecordScan) {
        (tally!, scan ?? stream.finish())
    }
}
