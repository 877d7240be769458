import APITraceTestSupport
import APITraceCollectorTestSupport
import APITraceCollector
import Foundation
import Testing

/// The collector against gzip bombs built by Python's zlib (an independent gzip): refused with
/// 413 after a bounded amount of inflating, while an honest file of very repetitive lines passes.
@Suite("Decompression ratio")
struct DecompressionRatioTests {
    static let token = "secret-token"

    /// Writes the gzip files with Python and returns, per name, (compressed bytes, inflated bytes) as Python counted them.
    static func makeFiles(in dir: TemporaryDirectory, bombs: Bool = true) async throws -> [String: (compressed: Int, inflated: Int)] {
        let script = #"""
import sys, zlib, os, json
out = sys.argv[1]
header = b'{"type":"header","format":"apitrace","version":1,"producer":"bomb","app":"t","started":"2026-11-22T10:00:00.000Z"}\n'
def member(parts):
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    data, n = b'', 0
    for p in parts:
        data += c.compress(p); n += len(p)
    return data + c.flush(), n
def request(i):
    return ('{"type":"request","ts":"2026-11-22T10:%02d:%02d.%03dZ","session":"s1","method":"GET","route":"/v1/users/{id}",'
            '"host":"api.example.com","status":200,"duration_ms":12.5,"bytes_in":512,"bytes_out":0,"attempt":1}\n'
            % (i // 60000 % 60, i // 1000 % 60, i % 1000)).encode()
sizes = {}
def write(name, members):
    data, n = b'', 0
    for d, k in members:
        data += d; n += k
    open(os.path.join(out, name), 'wb').write(data)
    sizes[name] = [len(data), n]
bombs = sys.argv[2] == 'bombs'
# The finding: 0.9 GiB of newlines after a valid header, about 0.9 MB of gzip.
if bombs: write('newlines.gz', [member([header] + [b'\n' * (1 << 20)] * 921)])
# The same bytes as 300 members of 3 MiB each.
if bombs: write('members.gz', [member([header])] + [member([b'\n' * (1 << 20)] * 3) for _ in range(300)])
# A bomb behind 5 MB (1.1 MB of gzip) of honest, varied lines, so the ratio is low at first.
honest = [('{"type":"request","ts":"2026-11-22T10:00:00.000Z","trace_id":"%032x","method":"GET","route":"/r/%d","status":%d,"duration_ms":%d.%d}\n'
           % (int.from_bytes(os.urandom(16), 'big'), i % 97, 200 + i % 7, i % 1000, i % 10)).encode() for i in range(40000)]
if bombs: write('late.gz', [member([header] + honest + [b' ' * (1 << 20)] * 600)])
# Honest and very repetitive: lines differing only in their timestamps.
write('repetitive.gz', [member([header] + [request(i) for i in range(200000)])])
print(json.dumps(sizes))
"""#
        let result = try await runChild("/usr/bin/python3", ["-c", script, dir.path, bombs ? "bombs" : "honest"])
        try #require(result.status == 0, "\(result.stderr)")
        let decoded = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: [Int]]
        return decoded.mapValues { ($0[0], $0[1]) }
    }

    @Test("gzip bombs (one member, many members, behind honest lines) get 413 after bounded work; a 50x honest file is stored")
    func bombsAreRefusedEarly() async throws {
        let dir = TemporaryDirectory()
        let files = try await Self.makeFiles(in: dir)
        let store = TemporaryDirectory()
        // The shipped limits: 64 MiB bodies, 1 GiB decompressed, ratio 200.
        let server = try await RunningCollector.start(try TraceCollector(configuration: .init(directory: store.path, tokens: [Self.token])))
        defer { Task { await server.stop() } }
        for name in ["newlines.gz", "members.gz", "late.gz"] {
            let (compressed, inflated) = try #require(files[name])
            #expect(inflated > 200 * compressed && inflated < 1 << 30, "\(name) is not a bomb under the byte limit: \(compressed) -> \(inflated)")
            let body = [UInt8](try #require(FileManager.default.contents(atPath: dir.file(name))))
            let started = Date()
            let answer = try await HTTPClient.upload(server.uploadURL, body)
            let seconds = Date().timeIntervalSince(started)
            #expect(answer.status == 413, "\(name): \(answer.status) \(answer.text)")
            #expect(answer.text.contains("more than 200 times its compressed size"), "\(name): \(answer.text)")
            // The work is bounded: at most 1 MiB plus 200 times a 64 KiB window, and one 256 KiB block of output, were inflated.
            let inflatedBeforeRefusal: Int = answer.text.firstMatch(of: /\((\d+) bytes out of its compressed bytes/).flatMap { Int($0.1) } ?? .max
            let workBound: Int = (1 << 20) + 200 * (64 << 10) + (256 << 10)
            #expect(inflatedBeforeRefusal <= workBound, "\(name): \(answer.text)")
            // A budget, not a speed target: on main these took 8 s and more on a quiet machine (the whole
            // 0.9 GiB inflated), 240 s on a loaded one; the work bound above is the sharp check.
            #expect(seconds < 30, "\(name) took \(seconds) s to refuse")
        }
        #expect(server.collector.metrics.snapshot.rejected == [.decompressedTooLarge: 3])
        #expect(TraceFiles.allFiles(under: store.path).isEmpty)

        let (compressed, inflated) = try #require(files["repetitive.gz"])
        #expect(inflated > 30 * compressed && inflated < 200 * compressed, "repetitive.gz: \(compressed) -> \(inflated)")
        let honest = try await HTTPClient.upload(server.uploadURL, [UInt8](try #require(FileManager.default.contents(atPath: dir.file("repetitive.gz")))))
        #expect(honest.status == 201, "\(honest.text)")
    }

    @Test("the ratio is a setting: at --max-decompression-ratio 20 the 50x honest file is refused, naming the ratio")
    func ratioIsConfigurable() async throws {
        let dir = TemporaryDirectory()
        _ = try await Self.makeFiles(in: dir, bombs: false)
        let store = TemporaryDirectory()
        let server = try await RunningCollector.start(try TraceCollector(configuration: .init(directory: store.path, tokens: [Self.token], maxDecompressionRatio: 20)))
        defer { Task { await server.stop() } }
        let answer = try await HTTPClient.upload(server.uploadURL, [UInt8](try #require(FileManager.default.contents(atPath: dir.file("repetitive.gz")))))
        #expect(answer.status == 413 && answer.text.contains("more than 20 times its compressed size"), "\(answer.status) \(answer.text)")
    }
}
