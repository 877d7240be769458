import APITraceFormat

/// A batch encoded as it is read: each scanned event line mapped (``OTLPMapping``) straight into
/// the protobuf bytes of its resource's spans or log records, then put together as one
/// `ExportTraceServiceRequest` and one `ExportLogsServiceRequest`, byte for byte what
/// ``OTLPProtobufEncoding`` writes for the same ``OTLPBatch``.
///
/// Its buffers are kept from batch to batch, so a run allocates them once per reading thread.
struct OTLPProtobufBatch {
    private struct Group {
        var resource: OTLPResource
        var items = OTLPProtobufItemWriter()
    }

    /// Groups in the order first met; those past `spanGroupCount` / `logGroupCount` are spare buffers.
    private var spanGroups: [Group] = []
    private var logGroups: [Group] = []
    private var spanGroupCount = 0
    private var logGroupCount = 0
    private var spanIndex: [OTLPResource: Int] = [:]
    private var logIndex: [OTLPResource: Int] = [:]
    /// The group of the last span (log record) and the caller's id of its resource.
    private var lastSpan: (resourceID: Int, group: Int)?
    private var lastLog: (resourceID: Int, group: Int)?
    private var scratch = OTLPMapping.Scratch()
    private var other = ProtobufWriter()
    private(set) var spanCount = 0
    private(set) var logCount = 0

    /// Items held.
    var count: Int { spanCount + logCount }

    /// About how many bytes of text the items hold (as ``OTLPBatch/approximateBytes`` counts them).
    private(set) var approximateBytes = 0

    /// Adds what `record` becomes, under `resource`; `resourceID` is the caller's name for that
    /// resource value, the same for as long as it does not change (so most lines take no hashing,
    /// and no copy of the resource).
    mutating func add(_ record: TraceRecord, resource: @autoclosure () -> OTLPResource, resourceID: Int) {
        if record.kind == .request {
            let g = Self.group(&spanGroups, &spanGroupCount, &spanIndex, &lastSpan, resource, resourceID)
            let before = spanGroups[g].items.approximateBytes
            OTLPMapping.map(record, into: &spanGroups[g].items, scratch: &scratch)
            approximateBytes += spanGroups[g].items.approximateBytes - before
            spanCount += 1
        } else {
            let g = Self.group(&logGroups, &logGroupCount, &logIndex, &lastLog, resource, resourceID)
            let before = logGroups[g].items.approximateBytes
            OTLPMapping.map(record, into: &logGroups[g].items, scratch: &scratch)
            approximateBytes += logGroups[g].items.approximateBytes - before
            logCount += 1
        }
    }

    private static func group(
        _ groups: inout [Group], _ used: inout Int, _ index: inout [OTLPResource: Int], _ last: inout (resourceID: Int, group: Int)?,
        _ resourceOfRecord: () -> OTLPResource, _ resourceID: Int
    ) -> Int {
        if let last, last.resourceID == resourceID { return last.group }
        let resource = resourceOfRecord()
        let g: Int
        if let known = index[resource] {
            g = known
        } else {
            g = used
            if used < groups.count {
                groups[used].resource = resource
                groups[used].items.removeAll()
            } else {
                groups.append(Group(resource: resource))
            }
            used += 1
            index[resource] = g
        }
        last = (resourceID, g)
        return g
    }

    /// The `ExportTraceServiceRequest` of the spans.
    mutating func traces() -> [UInt8] { request(spanGroups[..<spanGroupCount]) }

    /// The `ExportLogsServiceRequest` of the log records.
    mutating func logs() -> [UInt8] { request(logGroups[..<logGroupCount]) }

    /// `resource_spans` (`resource_logs`) per group: the resource, then one scope holding the items;
    /// lengths computed first, so nothing is moved.
    private mutating func request(_ groups: ArraySlice<Group>) -> [UInt8] {
        var w = ProtobufWriter(reservingCapacity: groups.reduce(0) { $0 + $1.items.writer.count + 512 })
        for group in groups {
            other.removeAll()
            OTLPProtobufEncoding.resource(group.resource, into: &other)
            let resourceLength = other.count
            OTLPProtobufEncoding.scope(into: &other)
            let scopeLength = other.count - resourceLength
            let scopeItems = scopeLength + group.items.writer.count
            w.lengthPrefix(1, resourceLength + ProtobufWriter.tagSize(2) + ProtobufWriter.varintSize(UInt64(scopeItems)) + scopeItems)
            other.withUnsafeBytes { o in
                w.append(UnsafeRawBufferPointer(rebasing: o[..<resourceLength]))
                w.lengthPrefix(2, scopeItems)
                w.append(UnsafeRawBufferPointer(rebasing: o[resourceLength...]))
            }
            group.items.writer.withUnsafeBytes { w.append($0) }
        }
        return w.finished()
    }

    /// Forgets the items, keeping the buffers.
    mutating func removeAll() {
        spanGroupCount = 0
        logGroupCount = 0
        spanIndex.removeAll(keepingCapacity: true)
        logIndex.removeAll(keepingCapacity: true)
        lastSpan = nil
        lastLog = nil
        spanCount = 0
        logCount = 0
        approximateBytes = 0
    }
}
