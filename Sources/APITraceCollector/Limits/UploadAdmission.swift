import Foundation

/// Bounds what uploads in progress may hold: how many at once, and how many body bytes in all.
///
/// An upload is admitted before its body is read and then grows its share of the byte budget
/// as its body comes in; when either bound would be passed, the upload is answered
/// `503 Service Unavailable` with `Retry-After` and its memory is given back at once. Uploaders
/// retry after `Retry-After`, so a burst from a fleet is spread out instead of taking the
/// collector's memory.
final class UploadAdmission: @unchecked Sendable {
    private let lock = NSLock()
    private let maxUploads: Int
    private let maxBytes: Int
    private var uploads = 0
    private var bytes = 0
    private var peakUploads = 0
    private var peakBytes = 0

    init(maxUploads: Int, maxBytes: Int) {
        self.maxUploads = maxUploads
        self.maxBytes = maxBytes
    }

    /// One admitted upload's share; give it back with ``release()``.
    final class Ticket: @unchecked Sendable {
        fileprivate let admission: UploadAdmission
        fileprivate var held: Int
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
            admission.giveBack(uploads: 1, bytes: held)
        }
    }

    /// Admits an upload holding `initialBytes` (its `Content-Length`, when known), or returns nil when full.
    func admit(initialBytes: Int) -> Ticket? {
        lock.withLock { () -> Ticket? in
            guard uploads < maxUploads, bytes + initialBytes <= maxBytes else { return nil }
            uploads += 1
            bytes += initialBytes
            peakUploads = max(peakUploads, uploads)
            peakBytes = max(peakBytes, bytes)
            return Ticket(admission: self, held: initialBytes)
        }
    }

    private func take(_ more: Int) -> Bool {
        lock.withLock {
            guard bytes + more <= maxBytes else { return false }
            bytes += more
            peakBytes = max(peakBytes, bytes)
            return true
        }
    }

    private func giveBack(uploads released: Int, bytes freed: Int) {
        lock.withLock {
            uploads -= released
            bytes -= freed
        }
    }

    /// Uploads and body bytes held now, and the most held at once since the start.
    var usage: (uploads: Int, bytes: Int, peakUploads: Int, peakBytes: Int) {
        lock.withLock { (uploads, bytes, peakUploads, peakBytes) }
    }
}
