import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// The one fold of decode paths (`TraceEvent.DecodeFailure.foldIndices`): the String form every
/// grouping by text uses and the byte form of the readers' hot path must give the same answer,
/// and both the answer of Python's `re.sub(r"\[[0-9]+\]", "[*]", path)`, computed here independently.
@Suite("Decode path fold")
struct DecodePathFoldTests {
    /// Hostile paths: combining marks after a bracket, nested and unclosed brackets, non-ASCII digits.
    static let paths: [String] = [
        "data.apps[3].stability", "data.apps[12][0].x", "a[[1]", "a[1[2]]", "[", "[]", "[1", "a]1[", "[01]",
        "a[1]\u{301}.b", "a[\u{301}1]", "x[١٢]", "x[１]", "emoji[7]😀[8]", "q[1]]", "[[[[2]]]]", "a[1x]", "",
        "deep" + String(repeating: "[9]", count: 200),
    ]

    @Test("String and byte folds agree with each other and with Python's regex on hostile paths")
    func agreesWithPython() async throws {
        let input = try JSONSerialization.data(withJSONObject: Self.paths)
        let script = #"import json, re, sys; print(json.dumps([re.sub(r"\[[0-9]+\]", "[*]", p) for p in json.load(sys.stdin)]))"#
        let run = try await runOffPool("/usr/bin/python3", ["-c", script], stdin: input)
        #expect(run.status == 0, "\(String(decoding: run.stderr, as: UTF8.self))")
        let expected = try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String])
        for (path, want) in zip(Self.paths, expected) {
            var bytes: [UInt8] = []
            Array(path.utf8).withUnsafeBytes { TraceEvent.DecodeFailure.foldIndices($0, into: &bytes) }
            #expect(TraceEvent.DecodeFailure.foldIndices(path) == want, "\(path.debugDescription)")
            #expect(String(decoding: bytes, as: UTF8.self) == want, "\(path.debugDescription)")
            let failure = TraceEvent.DecodeFailure(entity: "E", kind: .keyNotFound, path: path, message: "m")
            #expect(failure.pathPattern == want)
        }
    }
}
