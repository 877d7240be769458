import APITraceSSE
import Testing

/// One rule of the WHATWG "server-sent events" interpretation, as a stream and what it must produce.
struct ParserRule: Sendable, CustomTestStringConvertible {
    var name: String
    var stream: [UInt8]
    var events: [ServerSentEvent]
    var lastEventID: String = ""
    var reconnectionTime: Int? = nil

    var testDescription: String { name }

    init(_ name: String, _ stream: String, _ events: [ServerSentEvent], lastEventID: String = "", retry: Int? = nil) {
        self.init(name, Array(stream.utf8), events, lastEventID: lastEventID, retry: retry)
    }

    init(_ name: String, _ stream: [UInt8], _ events: [ServerSentEvent], lastEventID: String = "", retry: Int? = nil) {
        self.name = name
        self.stream = stream
        self.events = events
        self.lastEventID = lastEventID
        self.reconnectionTime = retry
    }
}

let parserRules: [ParserRule] = [
    ParserRule("data then empty line dispatches a message", "data: hello\n\n", [.init(data: "hello")]),
    ParserRule("a leading BOM is skipped", [0xEF, 0xBB, 0xBF] + Array("data: x\n\n".utf8), [.init(data: "x")]),
    ParserRule("only one BOM is skipped: a second one is part of the field name",
               [0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + Array("data: x\n\ndata: y\n\n".utf8), [.init(data: "y")]),
    ParserRule("a BOM later in the stream is not skipped",
               Array("data: a\n\n".utf8) + [0xEF, 0xBB, 0xBF] + Array("data: b\n\n".utf8), [.init(data: "a")]),
    ParserRule("LF ends lines", "data: a\ndata: b\n\n", [.init(data: "a\nb")]),
    ParserRule("CR ends lines", "data: a\rdata: b\r\r", [.init(data: "a\nb")]),
    ParserRule("CRLF ends lines", "data: a\r\ndata: b\r\n\r\n", [.init(data: "a\nb")]),
    ParserRule("mixed line endings", "data: a\r\ndata: b\rdata: c\n\r\n", [.init(data: "a\nb\nc")]),
    ParserRule("LF CR is two line ends, so it dispatches", "data: a\n\rdata: b\n\n", [.init(data: "a"), .init(data: "b")]),
    ParserRule("a line starting with a colon is a comment", ": keep-alive\ndata: a\n:another\n\n", [.init(data: "a")]),
    ParserRule("a comment alone does not dispatch", ": ping\n\n", []),
    ParserRule("one space after the colon is stripped, not two", "data:  two\n\n", [.init(data: " two")]),
    ParserRule("no space after the colon", "data:x\n\n", [.init(data: "x")]),
    ParserRule("a tab after the colon is kept", "data:\tx\n\n", [.init(data: "\tx")]),
    ParserRule("the value runs past further colons", "data: a: b:c\n\n", [.init(data: "a: b:c")]),
    ParserRule("no colon: the line is the field name with an empty value", "data\n\n", [.init(data: "")]),
    ParserRule("two empty data fields give one LF", "data\ndata\n\n", [.init(data: "\n")]),
    ParserRule("the trailing LF of the data buffer is removed, one only", "data: a\ndata\n\n", [.init(data: "a\n")]),
    ParserRule("field names are case-sensitive", "Data: a\nDATA: b\ndata: c\n\n", [.init(data: "c")]),
    ParserRule("unknown fields are ignored", "foo: bar\ndata: a\nretry-after: 5\n\n", [.init(data: "a")]),
    ParserRule("event sets the type", "event: update\ndata: a\n\n", [.init(type: "update", data: "a")]),
    ParserRule("the type does not carry over to the next event", "event: update\ndata: a\n\ndata: b\n\n",
               [.init(type: "update", data: "a"), .init(data: "b")]),
    ParserRule("an empty event field means message", "event\ndata: a\n\n", [.init(data: "a")]),
    ParserRule("the type is reset even when nothing is dispatched", "event: x\n\ndata: a\n\n", [.init(data: "a")]),
    ParserRule("id sets the last event id", "id: 7\ndata: a\n\n", [.init(id: "7", data: "a")], lastEventID: "7"),
    ParserRule("the last event id persists across events without id", "id: 7\ndata: a\n\ndata: b\n\n",
               [.init(id: "7", data: "a"), .init(id: "7", data: "b")], lastEventID: "7"),
    ParserRule("an empty id field resets the last event id", "id: 7\ndata: a\n\nid\ndata: b\n\n",
               [.init(id: "7", data: "a"), .init(id: "", data: "b")], lastEventID: ""),
    ParserRule("an id containing NUL is ignored", "id: 7\ndata: a\n\nid: 8\u{0}9\ndata: b\n\n",
               [.init(id: "7", data: "a"), .init(id: "7", data: "b")], lastEventID: "7"),
    ParserRule("an id without data is committed but nothing is dispatched", "id: 9\n\n", [], lastEventID: "9"),
    ParserRule("an id after the data still belongs to the event", "data: a\nid: 3\n\n", [.init(id: "3", data: "a")], lastEventID: "3"),
    ParserRule("retry with digits sets the reconnection time", "retry: 2500\n\n", [], retry: 2500),
    ParserRule("retry with a non-digit is ignored", "retry: 1000\n\nretry: 25x\n\nretry: -5\n\nretry: 1.5\n\n", [], retry: 1000),
    ParserRule("an empty retry is ignored", "retry: 300\nretry\n\n", [], retry: 300),
    ParserRule("retry is not reset by events without retry", "retry: 300\ndata: a\n\ndata: b\n\n",
               [.init(data: "a"), .init(data: "b")], retry: 300),
    ParserRule("retry with a space before the digits is ignored (only one space is stripped)", "retry:  300\n\n", []),
    ParserRule("empty lines without data dispatch nothing", "\n\n\r\n\r", []),
    ParserRule("a partial event at the end of the stream is discarded", "data: a\n\ndata: b\n", [.init(data: "a")]),
    ParserRule("an id in a partial event at the end of the stream is not committed", "id: 1\ndata: a\n\nid: 2\ndata: b\n",
               [.init(id: "1", data: "a")], lastEventID: "1"),
    ParserRule("an unterminated last line is discarded", "data: a\n\ndata: b", [.init(data: "a")]),
    ParserRule("UTF-8 text is decoded", "data: caf\u{E9} \u{1F680}\n\n", [.init(data: "caf\u{E9} \u{1F680}")]),
    ParserRule("invalid UTF-8 becomes U+FFFD", Array("data: a".utf8) + [0xFF] + Array("\n\n".utf8), [.init(data: "a\u{FFFD}")]),
]

/// A realistic stream touching every rule at once, for the chunk boundary tests.
let sampleStream: [UInt8] = [0xEF, 0xBB, 0xBF] + Array((
    ": welcome\r\n" + "retry: 1500\r\n" + "id: 1\r\n" + "event: news\r\n" + "data: first\r\n" + "data: second line\r\n\r\n"
    + "data:no-space\r" + "id: 2\r\r" + "id: x\u{0}y\n" + "data: {\"k\": \"caf\u{E9}\"}\n\n"
    + "event: ping\n\n" + "id: 3\ndata\n\n" + "data: tail without end"
).utf8)

let sampleEvents: [ServerSentEvent] = [
    .init(id: "1", type: "news", data: "first\nsecond line"),
    .init(id: "2", data: "no-space"),
    .init(id: "2", data: "{\"k\": \"caf\u{E9}\"}"),
    .init(id: "3", data: ""),
]

@Suite("Server-sent events parser")
struct ServerSentEventParserTests {
    @Test("each rule of the spec, fed whole", arguments: parserRules)
    func rule(_ rule: ParserRule) {
        var parser = ServerSentEventParser()
        let events = parser.push(rule.stream)
        parser.finishStream()
        #expect(events == rule.events)
        #expect(parser.lastEventID == rule.lastEventID)
        #expect(parser.reconnectionTime == rule.reconnectionTime)
    }

    @Test("each rule of the spec, fed one byte at a time", arguments: parserRules)
    func ruleByteByByte(_ rule: ParserRule) {
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        for byte in rule.stream { events += parser.push([byte]) }
        parser.finishStream()
        #expect(events == rule.events)
        #expect(parser.lastEventID == rule.lastEventID)
        #expect(parser.reconnectionTime == rule.reconnectionTime)
    }

    @Test("the sample stream split in two at every byte position gives the same events", arguments: 0...sampleStream.count)
    func splitEverywhere(_ position: Int) {
        var parser = ServerSentEventParser()
        var events = parser.push(Array(sampleStream[..<position]))
        events += parser.push(Array(sampleStream[position...]))
        parser.finishStream()
        #expect(events == sampleEvents)
        #expect(parser.lastEventID == "3")
        #expect(parser.reconnectionTime == 1500)
    }

    @Test("the sample stream split in three at every pair of positions gives the same events")
    func splitInThree() {
        for first in 0...sampleStream.count {
            for second in first...sampleStream.count {
                var parser = ServerSentEventParser()
                var events = parser.push(Array(sampleStream[..<first]))
                events += parser.push(Array(sampleStream[first..<second]))
                events += parser.push(Array(sampleStream[second...]))
                #expect(events == sampleEvents, "split at \(first) and \(second)")
                if events != sampleEvents { return }
            }
        }
    }

    @Test("a CR at the end of one chunk and a LF at the start of the next make one line end")
    func crlfAcrossChunks() {
        var parser = ServerSentEventParser()
        var events = parser.push(Array("data: a\r".utf8))
        events += parser.push(Array("\ndata: b\r".utf8))
        events += parser.push(Array("\n\r".utf8))
        events += parser.push(Array("\n".utf8))
        #expect(events == [.init(data: "a\nb")])
    }

    @Test("a new stream after finishStream keeps the last event id and retry, and may start with its own BOM")
    func reconnectKeepsState() {
        var parser = ServerSentEventParser(lastEventID: "41")
        var events = parser.push(Array("retry: 10\ndata: a\n\nid: 42\ndata: b\n\nid: 43\ndata: lost".utf8))
        parser.finishStream()
        #expect(parser.lastEventID == "42")
        events += parser.push([0xEF, 0xBB, 0xBF] + Array("data: c\n\n".utf8))
        #expect(events == [.init(id: "41", data: "a"), .init(id: "42", data: "b"), .init(id: "42", data: "c")])
        #expect(parser.reconnectionTime == 10)
    }

    @Test("a partial line pending at finishStream does not leak into the next stream")
    func partialLineDiscarded() {
        var parser = ServerSentEventParser()
        _ = parser.push(Array("data: half".utf8))
        parser.finishStream()
        #expect(parser.push(Array("data: whole\n\n".utf8)) == [.init(data: "whole")])
    }

    @Test("a huge retry value saturates instead of overflowing")
    func hugeRetry() {
        var parser = ServerSentEventParser()
        _ = parser.push(Array("retry: 99999999999999999999999999\n\n".utf8))
        #expect(parser.reconnectionTime == Int.max)
    }
}
