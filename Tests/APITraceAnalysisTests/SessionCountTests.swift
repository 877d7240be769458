import APITraceAnalysis
import Testing

@Suite("Session counts")
struct SessionCountTests {
    @Test("SessionCount is exact up to its bound, then within its documented error, and merges like a union")
    func sessionCount() {
        var small = SessionCount()
        for i in 0..<1000 { small.insert(SessionCount.hash("s-\(i)")); small.insert(SessionCount.hash("s-\(i)")) }
        #expect(small.isExact && small.count == 1000)

        var a = SessionCount(), b = SessionCount(), both = SessionCount()
        for i in 0..<150_000 {
            let h = SessionCount.hash("session-\(i)")
            if i % 3 == 0 { a.insert(h) } else { b.insert(h) }
            if i < 100_000 { a.insert(SessionCount.hash("session-\(i + 50_000)")) }  // overlap between the halves
            both.insert(h)
        }
        #expect(!both.isExact)
        // 3 standard errors (1.6 % each) is under 5 %.
        #expect(abs(Double(both.count) - 150_000) / 150_000 < 3 * SessionCount.standardError)
        var merged = a
        merged.merge(b)
        #expect(merged.count == both.count)
        // An exact count merged into a sketch adds its sessions.
        var grown = small
        grown.merge(both)
        #expect(abs(Double(grown.count) - 151_000) / 151_000 < 3 * SessionCount.standardError)
    }
}
