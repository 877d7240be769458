import APITraceAlerting
import APITraceFormat
import APITraceTestSupport
import APITraceServerTestSupport
import CoreFoundation  // `stat` and `st_mode` (its owning module when files are batched with others that load it first)
import Foundation
import Testing

/// The state tells the truth: `apitrace alert` run as a child process against a real receiver,
/// with its state on a real full tmpfs, a state from a newer version, an empty one, and symbolic
/// links planted at every name it writes.
@Suite(.serialized) struct AlertStateFileTests {
    static let env = AlertCommandTests.env

    static func alert(_ dir: TemporaryDirectory, _ rules: String, state: String, at minutes: Int64) async throws -> ProcessResult {
        try await apitrace(["alert", dir.file("traces"), "--rules", rules, "--state", state, "--now", AlertCommandTests.at(minutes)], environment: env)
    }

    /// Mounts a real 64 KiB tmpfs under `dir`; the caller unmounts it.
    static func tinyDisk(in dir: TemporaryDirectory) async throws -> String {
        let mountPoint = dir.file("tiny")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try await runOffPool("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mount failed: \(String(decoding: mounted.stderr, as: UTF8.self))")
        return mountPoint
    }

    /// Fills the file system holding `folder` to its last byte.
    static func fill(_ folder: String) throws {
        let fd = open(folder + "/filler", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(fd) }
        let block = [UInt8](repeating: 0x5A, count: 4096)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        var small: UInt8 = 0x5A
        while write(fd, &small, 1) > 0 {}
        #expect(errno == ENOSPC)
    }

    @Test("on a full disk alert still pages, says it could not record the state, exits 3, and never prints TRIGGERED for a page it did not send",
          .enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func fullDisk() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        let disk = try await Self.tinyDisk(in: dir)
        defer { _ = try? run("/bin/umount", [disk]) }
        let state = disk + "/state.json"
        try await Receiver.with { receiver in
            let rules = try AlertCommandTests.rules(receiver, in: dir)
            // A quiet run before the disk fills: the state and its lock exist.
            let quiet = try await Self.alert(dir, rules, state: state, at: -100)
            #expect(quiet.status == 0, "\(quiet.stderr)")
            let before = try Data(contentsOf: URL(fileURLWithPath: state))
            try Self.fill(disk)

            let paged = try await Self.alert(dir, rules, state: state, at: 0)
            #expect(paged.status == 3, "\(paged.stdout)\(paged.stderr)")
            #expect(receiver.requests(to: "/v2/enqueue").map { $0.json["event_action"] as? String } == ["trigger"])
            #expect(paged.stderr.contains("No space left on device") && paged.stderr.contains("could not record the state"), "\(paged.stderr)")
            #expect(paged.stdout.contains("TRIGGERED") && paged.stdout.contains("delivered"), "\(paged.stdout)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: state)) == before)

            // The notifier refuses this time: no page went out, so no line may say TRIGGERED.
            receiver.script("/v2/enqueue", [.init(status: 403, body: #"{"status":"forbidden"}"#)])
            let refused = try await Self.alert(dir, rules, state: state, at: 1)
            #expect(refused.status == 3, "\(refused.stdout)\(refused.stderr)")
            #expect(receiver.requests(to: "/v2/enqueue").count == 2, "\(refused.stdout)\(refused.stderr)")
            #expect(!refused.stdout.contains("TRIGGERED") && refused.stdout.contains("NOT PAGED"), "\(refused.stdout)")
            #expect(refused.stderr.contains("could not record the state"), "\(refused.stderr)")
            // Both runs opened the incident afresh (neither could record it), under one dedup key:
            // PagerDuty folds the repeat into the first page's incident instead of opening one a minute.
            let keys = receiver.requests(to: "/v2/enqueue").compactMap { $0.json["dedup_key"] as? String }
            #expect(keys.count == 2 && Set(keys).count == 1, "\(keys)")
            #expect(paged.stdout.contains(keys[0]), "\(paged.stdout)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: state)) == before)
            // Nothing half-written is left on the disk.
            let left = try FileManager.default.contentsOfDirectory(atPath: disk).sorted()
            #expect(left == ["filler", "state.json", "state.json.counts", "state.json.lock"], "\(left)")
        }
    }

    @Test("a state written by a newer version is refused and left byte for byte; nothing is sent")
    func newerVersion() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        let newer = Data(#"{"version": 2, "incidents": {}, "mutes": [], "pending": [], "closed": [], "escalations": {"api-errors": {"level": 3}}}"#.utf8)
        try newer.write(to: URL(fileURLWithPath: dir.file("state.json")))
        try await Receiver.with { receiver in
            let rules = try AlertCommandTests.rules(receiver, in: dir)
            let run = try await Self.alert(dir, rules, state: dir.file("state.json"), at: 0)
            #expect(run.status == 3)
            #expect(run.stderr.contains("newer apitrace") && run.stderr.contains("state version 2") && run.stderr.contains(dir.file("state.json")), "\(run.stderr)")
            #expect(!run.stdout.contains("TRIGGERED"))
            #expect(receiver.requests.isEmpty)
            #expect(try Data(contentsOf: URL(fileURLWithPath: dir.file("state.json"))) == newer)
        }
    }

    @Test("an empty state file is reported as damaged, not taken as a fresh state", arguments: ["", "\n  \n"])
    func emptyState(content: String) async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        try Data(content.utf8).write(to: URL(fileURLWithPath: dir.file("state.json")))
        try await Receiver.with { receiver in
            let rules = try AlertCommandTests.rules(receiver, in: dir)
            let run = try await Self.alert(dir, rules, state: dir.file("state.json"), at: 0)
            #expect(run.status == 3)
            #expect(run.stderr.contains("\(dir.file("state.json")) is damaged (it is empty)"), "\(run.stderr)")
            #expect(receiver.requests.isEmpty)
            #expect(try String(contentsOfFile: dir.file("state.json"), encoding: .utf8) == content)
        }
    }

    @Test("a link planted at the lock's name is refused; the file it points to is not created")
    func linkAtLock() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        try FileManager.default.createSymbolicLink(atPath: dir.file("state.json.lock"), withDestinationPath: dir.file("created-by-cron"))
        try await Receiver.with { receiver in
            let rules = try AlertCommandTests.rules(receiver, in: dir)
            let run = try await Self.alert(dir, rules, state: dir.file("state.json"), at: 0)
            #expect(run.status == 3)
            #expect(run.stderr.contains("state.json.lock") && run.stderr.contains("symbolic link"), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.file("created-by-cron")))
        }
    }

    @Test("a link planted at the state's name is refused; the file it points to is unchanged")
    func linkAtState() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        let victim = Data(#"{"version":1,"incidents":{},"mutes":[],"pending":[],"closed":[]}"#.utf8)
        try victim.write(to: URL(fileURLWithPath: dir.file("victim.json")))
        try FileManager.default.createSymbolicLink(atPath: dir.file("state.json"), withDestinationPath: dir.file("victim.json"))
        try await Receiver.with { receiver in
            let rules = try AlertCommandTests.rules(receiver, in: dir)
            let run = try await Self.alert(dir, rules, state: dir.file("state.json"), at: 0)
            #expect(run.status == 3)
            #expect(run.stderr.contains("symbolic link"), "\(run.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: dir.file("victim.json"))) == victim)
        }
    }

    @Test("a FIFO at the state's, the lock's or the count cache's name, or as the rules file, never blocks alert",
          arguments: ["state.json", "state.json.lock", "state.json.counts", "rules-fifo.yaml"])
    func fifoAtAName(name: String) async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        #expect(mkfifo(dir.file(name), 0o644) == 0)
        try await Receiver.with { receiver in
            let rules = name.hasPrefix("rules") ? dir.file(name) : try AlertCommandTests.rules(receiver, in: dir)
            let run = try await HostileLocalFileTests.apitraceWithin(
                ["alert", dir.file("traces"), "--rules", rules, "--state", dir.file("state.json"), "--now", AlertCommandTests.at(0)],
                environment: Self.env)
            switch name {
            case "state.json.counts":
                // Only a cache: rebuilt from the traces, and the page goes out.
                #expect(run.status == 0, "\(run.stderr)")
                #expect(receiver.requests(to: "/v2/enqueue").count == 1)
            case "rules-fifo.yaml":
                #expect(run.status == 2 && run.stderr.contains(dir.file(name)) && run.stderr.contains("FIFO"), "\(run.stderr)")
            default:
                #expect(run.status == 3 && run.stderr.contains(dir.file(name)) && run.stderr.contains("FIFO"), "\(run.stderr)")
                #expect(receiver.requests.isEmpty)
            }
        }
    }

    /// The temporary names older versions used were `.state.json.<pid>.tmp` and
    /// `.state.json.counts.<pid>.tmp`: an attacker who can write the folder plants links at them
    /// for the next few thousand process ids (Linux hands them out in order).
    @Test("links planted at the temporary names of the state and the count cache, and at the count cache, are never written through")
    func linksAtTemporaries() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        let precious = Data("precious, owned by cron's user\n".utf8)
        try precious.write(to: URL(fileURLWithPath: dir.file("victim")))
        let fm = FileManager.default
        let lastPID = Int((try? String(contentsOfFile: "/proc/sys/kernel/ns_last_pid", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? Int(getpid())
        for pid in (lastPID + 1)...(lastPID + 3000) {
            try fm.createSymbolicLink(atPath: dir.file(".state.json.\(pid).tmp"), withDestinationPath: dir.file("victim"))
            try fm.createSymbolicLink(atPath: dir.file(".state.json.counts.\(pid).tmp"), withDestinationPath: dir.file("victim"))
        }
        try fm.createSymbolicLink(atPath: dir.file("state.json.counts"), withDestinationPath: dir.file("victim"))
        try await Receiver.with { receiver in
            let rules = try AlertCommandTests.rules(receiver, in: dir)
            let run = try await Self.alert(dir, rules, state: dir.file("state.json"), at: 0)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(receiver.requests(to: "/v2/enqueue").count == 1)
            #expect(try Data(contentsOf: URL(fileURLWithPath: dir.file("victim"))) == precious)
            // The state was written, as a file of its own, and records the page.
            let state = try StateStore(path: dir.file("state.json")).read()
            #expect(state.incidents["api-errors"]?.pages == 1)
            #expect(try fm.destinationOfSymbolicLinkIfAny(dir.file("state.json")) == nil)
        }
    }
}

extension FileManager {
    func destinationOfSymbolicLinkIfAny(_ path: String) throws -> String? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK else { return nil }
        return try destinationOfSymbolicLink(atPath: path)
    }
}
