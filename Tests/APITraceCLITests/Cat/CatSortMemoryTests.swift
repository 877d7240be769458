import APITraceTestSupport
import Foundation
import Testing

/// `cat --sort` holds back the events of files that overlap in time; past `--sort-buffer` it spills
/// sorted runs to temporary files and merges them, so its memory stays bounded whatever the input.
/// The input here is one gzip file whose events are out of time order throughout (the worst case: a
/// single file overlaps itself), written and checked by Python, the independent sorter.
@Suite("cat --sort in bounded memory", .serialized)
struct CatSortMemoryTests {
    /// Writes `events` request lines with shuffled times into one gzip trace file; Python also writes
    /// the expected output (a stable sort by time) next to it.
    static let writer = #"""
    import gzip, json, random, sys, datetime
    path, expected, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = random.Random(5)
    base = datetime.datetime(2026, 11, 22, 10, 0, tzinfo=datetime.timezone.utc)
    lines = [json.dumps({"type": "header", "format": "apitrace", "version": 1, "producer": "sort", "started": "2026-11-22T10:00:00.000Z"}, separators=(",", ":"))]
    events = []
    for i in range(n):
        ms = rng.randrange(0, 3_600_000)
        ts = (base + datetime.timedelta(milliseconds=ms)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        line = json.dumps({"type": "request", "ts": ts, "method": "GET", "route": "/apps/{id}/r%d" % (i % 97),
                           "status": 200 if i % 9 else 503, "duration_ms": i % 1000, "note": "x" * (i % 120)}, separators=(",", ":"))
        lines.append(line)
        events.append((ms, i, line))
    with gzip.open(path, "wt", compresslevel=1) as f: f.write("\n".join(lines) + "\n")
    events.sort(key=lambda e: (e[0], e[1]))
    with open(expected, "w") as f: f.write("".join(e[2] + "\n" for e in events))
    """#

    /// Runs a command and prints its exit status and peak resident memory (KB), from the kernel's
    /// accounting of the finished child.
    static let measurer = #"""
    import resource, subprocess, sys
    out = open(sys.argv[1], "wb")
    p = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.PIPE)
    sys.stderr.buffer.write(p.stderr)
    print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    """#

    static func write(events: Int, in dir: TemporaryDirectory) async throws -> (file: String, expected: String) {
        let file = dir.file("20261122T100000Z-sort-0001.jsonl.gz"), expected = dir.file("expected.jsonl")
        let made = try await runOffPool("/usr/bin/env", ["python3", "-c", writer, file, expected, String(events)])
        #expect(made.status == 0, "\(String(decoding: made.stderr, as: UTF8.self))")
        return (file, expected)
    }

    @Test("spilled runs merge to the same output as an in-memory sort, and peak memory stays far below the input")
    func boundedMemory() async throws {
        let dir = TemporaryDirectory()
        let (file, expected) = try await Self.write(events: 250_000, in: dir)
        let apitrace = try builtProduct("apitrace").path
        let output = dir.file("sorted.jsonl")
        let spillDir = dir.file("spill")
        try FileManager.default.createDirectory(atPath: spillDir, withIntermediateDirectories: true)
        // A 1 MB buffer over ~45 MB of lines: about 45 runs, so the runs are also merged into one on the way.
        let run = try await runOffPool(
            "/usr/bin/env", ["python3", "-c", Self.measurer, output, apitrace, "cat", "--sort", "--sort-buffer", "1", file],
            environment: ["TMPDIR": spillDir])
        let report = String(decoding: run.stdout, as: UTF8.self).split(separator: " ")
        #expect(report.first == "0", "\(String(decoding: run.stderr, as: UTF8.self))")
        let peakKB = Int(report.last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? .max
        let inputBytes = try FileManager.default.attributesOfItem(atPath: expected)[.size] as! Int
        #expect(inputBytes > 40 << 20)
        // Held in memory, the lines alone would take the whole input (1.5x of it before this change).
        #expect(peakKB * 1024 < inputBytes, "peak RSS \(peakKB) KB for \(inputBytes) bytes of lines")
        // And next to a plain `cat` of the same file (no lines held back), sorting adds about its buffer.
        let plain = try await runOffPool("/usr/bin/env", ["python3", "-c", Self.measurer, "/dev/null", apitrace, "cat", file])
        let plainKB = Int(String(decoding: plain.stdout, as: UTF8.self).split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        #expect(peakKB - plainKB < 16 << 10, "sorting took \(peakKB) KB, plain cat \(plainKB) KB")
        let printed = try Data(contentsOf: URL(fileURLWithPath: output))
        let want = try Data(contentsOf: URL(fileURLWithPath: expected))
        #expect(printed.count == want.count)
        #expect(printed == want, "the merged order differs from Python's stable sort by time")
        // The runs were unlinked as they were made: nothing is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: spillDir).isEmpty)
    }

    @Test("a temporary folder that is missing or full ends the run with a message naming it, not a crash or silent loss")
    func spillFailure() async throws {
        let dir = TemporaryDirectory()
        let (file, _) = try await Self.write(events: 40_000, in: dir)
        let apitrace = try builtProduct("apitrace").path
        let missing = dir.file("no-such-folder")
        var folders = [missing]
        // A real 256 KB tmpfs, when this process may mount one (root in the test's mount namespace).
        let small = dir.file("small-tmpfs")
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        let mounted = try await runOffPool("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", small])
        if mounted.status == 0 { folders.append(small) }
        defer { if mounted.status == 0 { _ = try? run("/bin/umount", [small]) } }
        for folder in folders {
            let result = try await runOffPool(apitrace, ["cat", "--sort", "--sort-buffer", "1", file], environment: ["TMPDIR": folder])
            let stderr = String(decoding: result.stderr, as: UTF8.self)
            #expect(result.status == 2, "\(folder): status \(result.status) \(stderr)")
            #expect(stderr.contains("cannot hold lines for sorting in \(folder)"), "\(stderr)")
        }
        if mounted.status != 0 { print("note: no tmpfs could be mounted here; only the missing folder was tried") }
    }
}
