@testable import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// The one way apitrace writes a file, on a real file system: planted links, a full real tmpfs.
@Suite("Atomic file writer")
struct AtomicFileWriterTests {
    @Test("a link planted at the target is replaced by the file, and the file it pointed to is unchanged")
    func linkAtTarget() throws {
        let dir = TemporaryDirectory()
        try Data("precious".utf8).write(to: URL(fileURLWithPath: dir.file("victim")))
        try FileManager.default.createSymbolicLink(atPath: dir.file("out.json"), withDestinationPath: dir.file("victim"))
        try AtomicFileWriter.write(Array("new".utf8), to: dir.file("out.json"))
        #expect(try String(contentsOfFile: dir.file("victim"), encoding: .utf8) == "precious")
        #expect(try FileManager.default.destinationOfSymbolicLinkOrNil(dir.file("out.json")) == nil)
        #expect(try String(contentsOfFile: dir.file("out.json"), encoding: .utf8) == "new")
        // Nothing but the target and the victim is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["out.json", "victim"])
    }

    @Test("a temporary name is never written through a link: creation is exclusive and does not follow links")
    func temporaryIsExclusive() throws {
        let dir = TemporaryDirectory()
        try Data("precious".utf8).write(to: URL(fileURLWithPath: dir.file("victim")))
        // Two writers at once get two temporaries; neither opens the other's.
        let a = try AtomicFileWriter(path: dir.file("state.json"))
        let b = try AtomicFileWriter(path: dir.file("state.json"))
        #expect(a.temporaryPath != b.temporaryPath)
        // A link planted at a writer's temporary name after the fact is replaced by the rename, not followed.
        let name = (b.temporaryPath as NSString).lastPathComponent
        #expect(name.hasPrefix(".state.json.") && name.hasSuffix(".tmp"))
        try Array("b".utf8).withUnsafeBytes { try b.write($0) }
        try b.commit()
        a.discard()
        // The flags themselves: a link at the name makes creation fail instead of writing the victim.
        try FileManager.default.createSymbolicLink(atPath: dir.file(".planted.tmp"), withDestinationPath: dir.file("victim"))
        let fd = open(dir.file(".planted.tmp"), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        #expect(fd < 0 && errno == EEXIST)
        #expect(try String(contentsOfFile: dir.file("victim"), encoding: .utf8) == "precious")
        #expect(try String(contentsOfFile: dir.file("state.json"), encoding: .utf8) == "b")
    }

    @Test("on a full real tmpfs the write fails naming the file and ENOSPC, the old file stays whole, no temporary is left",
          .enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func fullDisk() async throws {
        let dir = TemporaryDirectory()
        let mountPoint = dir.file("tiny")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try await runOffPool("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mount failed: \(String(decoding: mounted.stderr, as: UTF8.self))")
        defer { _ = try? run("/bin/umount", [mountPoint]) }
        let target = mountPoint + "/state.json"
        try AtomicFileWriter.write(Array("old state".utf8), to: target)
        let big = [UInt8](repeating: 0x41, count: 256 * 1024)
        #expect {
            try AtomicFileWriter.write(big, to: target)
        } throws: { error in
            guard let failure = error as? AtomicFileWriter.Failure else { return false }
            return failure.isNoSpace && failure.description.contains(target) && failure.description.contains("No space left on device")
        }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "old state")
        #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint) == ["state.json"])
    }
}

extension FileManager {
    /// The destination of a symbolic link at `path`, nil when `path` is not one.
    func destinationOfSymbolicLinkOrNil(_ path: String) throws -> String? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK else { return nil }
        return try destinationOfSymbolicLink(atPath: path)
    }
}
