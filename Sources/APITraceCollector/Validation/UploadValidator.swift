import APITraceFormat

/// Checks that a request body is an apitrace gzip file, complete or cut at its end, and reads its header.
///
/// The whole body is inflated (which also checks every member's CRC), counting the
/// decompressed bytes so a small body that expands to gigabytes is refused as soon as it
/// passes the limit, without ever holding the expanded data: only the first line is kept.
/// The compressed bytes are fed in slices, and the output may never pass ``maxRatio`` times
/// the compressed bytes fed (plus ``ratioAllowance``), over the whole body and over the last
/// ``ratioWindowSlices`` slices: a gzip bomb, whose every slice inflates a thousandfold, is
/// refused after a few megabytes of work instead of a gigabyte, even behind honest lines.
/// A body whose gzip data stops early (the file of a killed app, cut at a flush point) passes
/// with ``Validated/cutAt`` set, as long as its header line is complete.
///
/// Given an ``IngestTally``, the same pass counts the body's lines for `/metrics`: one inflate
/// per upload whether it is counted or not.
package struct UploadValidator: Sendable {
    /// Largest decompressed size accepted.
    var maxDecompressedBytes: Int
    /// Largest ratio of decompressed to compressed bytes fed so far.
    var maxRatio = 200
    /// Decompressed bytes allowed beyond the ratio, so a small file's first member is not judged alone.
    var ratioAllowance = 1 << 20
    /// Longest header line looked for.
    var maxHeaderBytes = 64 << 10
    /// Compressed bytes fed to the inflater at a time: the ratio is checked against what was fed.
    static let feedSlice = 16 << 10
    /// Slices (64 KiB of compressed bytes) of the sliding window the ratio is also checked over, so
    /// the slack of a long honest start cannot be spent on a bomb at the end: a window may
    /// inflate to ``ratioAllowance`` plus ``maxRatio`` times 64 KiB (14 MiB at the defaults).
    static let ratioWindowSlices = 4

    /// A validator refusing bodies that inflate past `maxDecompressedBytes`, or past `maxRatio` times their size.
    package init(maxDecompressedBytes: Int, maxRatio: Int = 200) {
        self.maxDecompressedBytes = maxDecompressedBytes
        self.maxRatio = maxRatio
    }

    private struct TooLarge: Error {}
    private struct TooDense: Error { var inflated: Int; var from: Int; var to: Int }

    /// A body that passed.
    package struct Validated {
        /// The file's header.
        var header: TraceFileHeader
        /// Where the gzip data stops, when the body is cut before its end.
        var cutAt: Int?
        /// The body's lines counted, when a tally was given (complete lines only, as a cut body is stored).
        var tally: IngestTally?
    }

    /// Returns the file's header and whether it is cut, or throws ``UploadRejection``; counts the
    /// body's lines into `tally` in the same pass (to be added to the metrics once stored).
    package func validate(_ body: UnsafeRawBufferPointer, counting tally: IngestTally? = nil) throws(UploadRejection) -> Validated {
        guard body.count > 0 else { throw UploadRejection(.emptyBody, "the body is empty; send the bytes of a finished .jsonl.gz trace file") }
        guard body.count >= 2, body[0] == 0x1F, body[1] == 0x8B else {
            throw UploadRejection(.notGzip, "the body is not gzip data (it does not start with 1f 8b); send the .jsonl.gz file as is")
        }
        var firstLine: [UInt8] = []
        var lineComplete = false
        var total = 0
        var fed = 0
        // (compressed bytes fed, bytes inflated) when each of the window's slices began; the first is the window's start.
        var window: [(fed: Int, total: Int)] = []
        var windowStart = 0
        let limit = maxDecompressedBytes
        let ratio = maxRatio, allowance = ratioAllowance
        let headerLimit = maxHeaderBytes
        var cutAt: Int?
        do {
            let inflater = try GzipInflater()
            let sink = { (chunk: UnsafeRawBufferPointer) throws in
                total += chunk.count
                if total > limit { throw TooLarge() }
                if total > allowance &+ ratio &* fed { throw TooDense(inflated: total, from: 0, to: fed) }
                let start = window[windowStart]
                if total - start.total > allowance &+ ratio &* (fed - start.fed) {
                    throw TooDense(inflated: total - start.total, from: start.fed, to: fed)
                }
                tally?.take(chunk)
                if !lineComplete {
                    if let newline = chunk.firstIndex(of: 0x0A) {
                        firstLine.append(contentsOf: chunk[..<newline])
                        lineComplete = true
                    } else if firstLine.count < headerLimit {
                        firstLine.append(contentsOf: chunk.prefix(headerLimit - firstLine.count))
                    }
                }
            }
            while fed < body.count {
                if window.count < Self.ratioWindowSlices {
                    window.append((fed, total))
                } else {
                    window[windowStart] = (fed, total)
                    windowStart = (windowStart + 1) % window.count
                }
                let slice = UnsafeRawBufferPointer(rebasing: body[fed..<min(body.count, fed + Self.feedSlice)])
                fed += slice.count
                try inflater.inflate(slice, into: sink)
            }
            do { try inflater.finish() } catch { cutAt = error.offset }
        } catch is TooLarge {
            throw UploadRejection(.decompressedTooLarge, "the body decompresses to more than \(limit) bytes, the collector's limit")
        } catch let dense as TooDense {
            throw UploadRejection(
                .decompressedTooLarge,
                "the body decompresses to more than \(ratio) times its compressed size (\(dense.inflated) bytes out of its compressed bytes \(dense.from) to \(dense.to), of \(body.count)), far beyond what gzip makes of trace lines: refused as a gzip bomb")
        } catch let error as GzipError {
            switch error.kind {
            case .truncated:
                throw UploadRejection(.truncated, "the gzip data is truncated at byte \(error.offset) of \(body.count)")
            case .corrupt, .initialization:
                throw UploadRejection(.notGzip, "the gzip data is corrupt: \(error)")
            }
        } catch {
            throw UploadRejection(.notGzip, "the gzip data could not be read: \(error)")
        }
        if let cutAt, !lineComplete {
            throw UploadRejection(.truncated, "the gzip data is truncated at byte \(cutAt) of \(body.count), before the end of the header line: nothing to keep")
        }
        guard !firstLine.isEmpty else { throw UploadRejection(.invalidHeader, "the file is empty: no header line") }
        if !lineComplete && firstLine.count >= headerLimit {
            throw UploadRejection(.invalidHeader, "the first line is longer than \(headerLimit) bytes, so it is not an apitrace header")
        }
        let line: TraceLine
        do {
            line = try firstLine.withUnsafeBytes { try TraceLine.decode($0) }
        } catch {
            throw UploadRejection(.invalidHeader, "the first line is not a valid apitrace header: \(error)")
        }
        guard case .header(let header) = line else {
            throw UploadRejection(.invalidHeader, "the first line is not an apitrace header (\"type\":\"header\")")
        }
        // The readers' own check (`HeaderCheck`): what the collector stores, every command reads.
        switch HeaderCheck.problem(version: header.version) {
        case .newer?:
            throw UploadRejection(.newerVersion, "the file is format version \(header.version), newer than this collector reads (\(TraceFileHeader.currentVersion)); upgrade the collector")
        case let refused?:
            throw UploadRejection(.invalidHeader, refused.reason)
        case nil:
            break
        }
        tally?.finish()
        return Validated(header: header, cutAt: cutAt, tally: tally)
    }
}
