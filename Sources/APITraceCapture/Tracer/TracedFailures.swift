import APITraceFormat

/// The failures a tracer recorded itself, a transport failure through the request lifecycle or a
/// decode failure through ``TracedJSONDecoder``, so that ``APITracer/recordError(_:userInfo:route:file:line:)``
/// of the same error does not count it a second time.
///
/// The usual pattern records each failure twice otherwise: the traced call records it, throws it,
/// and the app's `catch { recordError(error) }` records it again. One traced failure absorbs at most
/// one `recordError` of an error with the same identity and description, within a minute; the
/// memory is bounded (the last 64 failures), so a failure nobody reports again costs nothing later.
final class TracedFailures: Sendable {
    private struct Entry {
        var identity: String
        var description: String?
        var at: ContinuousClock.Instant
    }

    static let capacity = 64
    static let window: Duration = .seconds(60)

    private let entries = Locked<[Entry]>([])

    /// Remembers a failure the tracer recorded; `description` is `nil` when only its identity is known.
    func note(identity: String, description: String?, at now: ContinuousClock.Instant = .now) {
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeFirst(entries.count - Self.capacity + 1) }
            entries.append(Entry(identity: identity, description: description, at: now))
        }
    }

    /// Whether any failure is remembered: lets `recordError` skip describing the error when none is.
    var isEmpty: Bool { entries.withLock { $0.isEmpty } }

    /// Takes the oldest remembered failure of this error (same identity, and same description when
    /// one was noted), if any: `true` when the tracer had already recorded it.
    func consume(identity: String, description: String, at now: ContinuousClock.Instant = .now) -> Bool {
        entries.withLock { entries in
            entries.removeAll { now - $0.at > Self.window }
            guard let index = entries.firstIndex(where: {
                $0.identity == identity && ($0.description == nil || $0.description == description)
            }) else { return false }
            entries.remove(at: index)
            return true
        }
    }
}
