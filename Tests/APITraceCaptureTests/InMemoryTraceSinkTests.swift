import APITraceCapture
import Testing

@Suite("In-memory sink")
struct InMemoryTraceSinkTests {
    private func log(_ n: Int) -> TraceEvent {
        TraceEvent(.log(.init(level: "info", message: "event \(n)")))
    }

    private func numbers(_ sink: InMemoryTraceSink) -> [Int] {
        sink.events.map { event in
            guard case .log(let log) = event.payload else { return -1 }
            return Int(log.message.dropFirst("event ".count))!
        }
    }

    @Test("below capacity every event is kept, in order, nothing dropped")
    func belowCapacity() {
        let sink = InMemoryTraceSink(capacity: 5)
        for n in 0..<3 { sink.record(log(n)) }
        #expect(numbers(sink) == [0, 1, 2])
        #expect(sink.droppedCount == 0)
    }

    @Test("past capacity the newest events are kept, oldest first, and the overwritten ones counted", arguments: [
        (capacity: 1, recorded: 4), (capacity: 5, recorded: 5), (capacity: 5, recorded: 6), (capacity: 5, recorded: 23), (capacity: 7, recorded: 1000),
    ])
    func ring(capacity: Int, recorded: Int) {
        let sink = InMemoryTraceSink(capacity: capacity)
        for n in 0..<recorded { sink.record(log(n)) }
        #expect(numbers(sink) == Array(max(0, recorded - capacity)..<recorded))
        #expect(sink.droppedCount == max(0, recorded - capacity))
        #expect(sink.capacity == capacity)
    }

    @Test("removeAll empties the ring and resets the dropped count")
    func removeAll() {
        let sink = InMemoryTraceSink(capacity: 2)
        for n in 0..<5 { sink.record(log(n)) }
        sink.removeAll()
        #expect(sink.events.isEmpty)
        #expect(sink.droppedCount == 0)
        sink.record(log(9))
        #expect(numbers(sink) == [9])
    }

    @Test("a capacity below one keeps one event")
    func capacityFloor() {
        let sink = InMemoryTraceSink(capacity: 0)
        sink.record(log(1))
        sink.record(log(2))
        #expect(numbers(sink) == [2])
        #expect(sink.droppedCount == 1)
    }

    @Test("events recorded from many tasks at once: exactly capacity kept, the rest counted, no duplicates")
    func concurrent() async {
        let sink = InMemoryTraceSink(capacity: 100)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask { for n in 0..<250 { sink.record(self.log(task * 1000 + n)) } }
            }
        }
        let kept = numbers(sink)
        #expect(kept.count == 100)
        #expect(Set(kept).count == 100)
        #expect(sink.droppedCount == 8 * 250 - 100)
    }
}
