import APITraceFormat

/// Bounds what uploads in progress may hold: how many at once, and how many body bytes in all.
///
/// An upload is admitted before its body is read and then grows its share of the byte budget
/// as its body comes in (bytes received, never the `Content-Length` a client announces); when either bound would be passed, the upload is answered
/// `503 Service Unavailable` with `Retry-After` and its memory is given back at once. Uploaders
/// retry after `Retry-After`, so a burst from a fleet is spread out instead of taking the
/// collector's memory.
final class UploadAdmission: Sendable {
    private struct State {
        var uploads = 0
        var bytes = 0
        var peakUploads = 0
        var peakBytes = 0
    }

    private let maxUploads: Int
    private let maxBytes: Int
    private let state = Locked(State())

    init(maxUploads: Int, maxBytes: Int) {
        self.maxUploads = maxUploads
        self.maxBytes = maxBytes
    }

    /// One admitted upload's share; give it back with ``release()``. Used by one request at a time.
    final class Ticket: @unchecked Sendable {
        private let admission: UploadAdmission
        private var held: Int
        private var released = false

        fileprivate init(admission: UploadAdmission, held: Int) {
            self.admission = admission
            self.held = held
        }

        /// Grows the share to `total` bytes; false when the byte budget cannot take it.
        func grow(to total: Int) -> Bool {
            guard total > held else { return true }
            guard admission.take(total - held) else { return false }
            held = total
            return true
        }

        /// Gives the share back; later calls do nothing.
        func release() {
            guard !released else { return }
            released = true
            admission.giveBack(bytes: held)
        }
    }

    /// Admits an upload holding `initialBytes` (0 for a body not yet read), or returns nil when full.
    func admit(initialBytes: Int) -> Ticket? {
        let admitted = state.withLock { state -> Bool in
            guard state.uploads < maxUploads, state.bytes + initialBytes <= maxBytes else { return false }
            state.uploads += 1
            state.bytes += initialBytes
            state.peakUploads = max(state.peakUploads, state.uploads)
            state.peakBytes = max(state.peakBytes, state.bytes)
            return true
        }
        return admitted ? Ticket(admission: self, held: initialBytes) : nil
    }

    private func take(_ more: Int) -> Bool {
        state.withLock { state in
            guard state.bytes + more <= maxBytes else { return false }
            state.bytes += more
            state.peakBytes = max(state.peakBytes, state.bytes)
            return true
        }
    }

    private func giveBack(bytes freed: Int) {
        state.withLock { state in
            state.uploads -= 1
            state.bytes -= freed
        }
    }

    /// Uploads and body bytes held now, and the most held at once since the start.
    var usage: (uploads: Int, bytes: Int, peakUploads: Int, peakBytes: Int) {
        state.withLock { ($0.uploads, $0.bytes, $0.peakUploads, $0.peakBytes) }
    }
}
