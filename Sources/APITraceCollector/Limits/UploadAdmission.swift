import APITraceFormat
import Foundation

/// Bounds what uploads in progress may hold: how many at once, and how many body bytes in all.
///
/// An upload is admitted before its body is read and then grows its share of the byte budget
/// as its body comes in (bytes received, never the `Content-Length` a client announces);
/// when either bound would be passed, the upload is answered `503 Service Unavailable` with
/// `Retry-After` and its memory is given back at once. Uploaders retry after `Retry-After`, so a
/// burst from a fleet is spread out instead of taking the collector's memory.
///
/// Slots go to uploads that move: when every slot is taken, a newcomer takes the slot of the
/// slowest upload still reading its body, if that one has been reading for a second or more at
/// less than `preemptBelowBytesPerSecond`. The slow upload loses its slot at once (its bytes stay
/// counted until it lets them go) and is answered `503` at its next chunk, so clients that
/// dribble with the public upload token cannot keep the others out, however many they are.
final class UploadAdmission: Sendable {
    private struct Slot {
        var admitted: UInt64
        var bytes = 0
        var reading = true
    }

    private struct State {
        var slots: [Int: Slot] = [:]
        var nextID = 0
        var bytes = 0
        var peakUploads = 0
        var peakBytes = 0
        var preempted = 0
    }

    private let maxUploads: Int
    private let maxBytes: Int
    private let preemptBelowBytesPerSecond: Int
    private let state = Locked(State())
    /// How long an upload reads before its rate is judged.
    private static let judgedAfterNanoseconds: UInt64 = 1_000_000_000

    /// `preemptBelowBytesPerSecond` 0: admitted uploads keep their slots until they end.
    init(maxUploads: Int, maxBytes: Int, preemptBelowBytesPerSecond: Int = 0) {
        self.maxUploads = maxUploads
        self.maxBytes = maxBytes
        self.preemptBelowBytesPerSecond = preemptBelowBytesPerSecond
    }

    /// One admitted upload's share; give it back with ``release()``. Used by one request at a time.
    final class Ticket: @unchecked Sendable {
        private let admission: UploadAdmission
        private let id: Int
        private var held: Int
        private var released = false

        fileprivate init(admission: UploadAdmission, id: Int, held: Int) {
            self.admission = admission
            self.id = id
            self.held = held
        }

        /// Grows the share to `total` bytes; false when the byte budget cannot take it, or the
        /// upload lost its slot to a faster one.
        func grow(to total: Int) -> Bool {
            guard total > held else { return admission.holdsSlot(id) }
            guard admission.take(total - held, for: id) else { return false }
            held = total
            return true
        }

        /// False once the upload lost its slot to a newcomer.
        var holdsSlot: Bool { admission.holdsSlot(id) }

        /// The body is in: from now on the slot cannot be taken by a newcomer.
        func finishedReading() { admission.finishedReading(id) }

        /// Gives the share back; later calls do nothing.
        func release() {
            guard !released else { return }
            released = true
            admission.giveBack(id, bytes: held)
        }
    }

    /// Admits an upload holding `initialBytes` (0 for a body not yet read), or returns nil when full.
    func admit(initialBytes: Int) -> Ticket? {
        let now = DispatchTime.now().uptimeNanoseconds
        let id = state.withLock { state -> Int? in
            guard state.bytes + initialBytes <= maxBytes else { return nil }
            if state.slots.count >= maxUploads {
                guard let victim = slowestReader(state.slots, now: now) else { return nil }
                state.slots[victim] = nil
                state.preempted += 1
            }
            let id = state.nextID
            state.nextID += 1
            state.slots[id] = Slot(admitted: now, bytes: initialBytes)
            state.bytes += initialBytes
            state.peakUploads = max(state.peakUploads, state.slots.count)
            state.peakBytes = max(state.peakBytes, state.bytes)
            return id
        }
        return id.map { Ticket(admission: self, id: $0, held: initialBytes) }
    }

    /// The slot to give a newcomer: the slowest upload still reading, judged after a second, below the rate.
    private func slowestReader(_ slots: [Int: Slot], now: UInt64) -> Int? {
        guard preemptBelowBytesPerSecond > 0 else { return nil }
        var slowest: (id: Int, rate: Double)?
        for (id, slot) in slots where slot.reading {
            let elapsed = now &- slot.admitted
            guard elapsed >= Self.judgedAfterNanoseconds, elapsed < UInt64.max / 2 else { continue }
            let rate = Double(slot.bytes) / (Double(elapsed) / 1e9)
            guard rate < Double(preemptBelowBytesPerSecond) else { continue }
            if slowest.map({ rate < $0.rate }) ?? true { slowest = (id, rate) }
        }
        return slowest?.id
    }

    private func holdsSlot(_ id: Int) -> Bool {
        state.withLock { $0.slots[id] != nil }
    }

    private func take(_ more: Int, for id: Int) -> Bool {
        state.withLock { state in
            guard state.slots[id] != nil, state.bytes + more <= maxBytes else { return false }
            state.bytes += more
            state.slots[id]?.bytes += more
            state.peakBytes = max(state.peakBytes, state.bytes)
            return true
        }
    }

    private func finishedReading(_ id: Int) {
        state.withLock { $0.slots[id]?.reading = false }
    }

    private func giveBack(_ id: Int, bytes freed: Int) {
        state.withLock { state in
            state.slots[id] = nil
            state.bytes -= freed
        }
    }

    /// Uploads and body bytes held now, and the most held at once since the start.
    var usage: (uploads: Int, bytes: Int, peakUploads: Int, peakBytes: Int) {
        state.withLock { ($0.slots.count, $0.bytes, $0.peakUploads, $0.peakBytes) }
    }

    /// Uploads that lost their slot to a newcomer because they read too slowly.
    var preempted: Int { state.withLock { $0.preempted } }
}
