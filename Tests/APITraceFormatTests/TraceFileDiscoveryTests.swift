import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// Discovery decides which files every command sees under a folder.
@Suite struct TraceFileDiscoveryTests {
    @Test func findsTraceFilesInSubfoldersSortedAndSkipsHiddenAndOtherFiles() throws {
        let dir = TemporaryDirectory()
        let fm = FileManager.default
        for folder in ["b", "a/deeper", ".hidden-folder"] { try fm.createDirectory(atPath: dir.file(folder), withIntermediateDirectories: true) }
        for file in ["z.jsonl.gz", "b/y.jsonl", "a/deeper/x.jsonl.gz", ".hidden.jsonl.gz", "notes.txt", "b/trace.jsonl.gz.tmp", ".hidden-folder/w.jsonl.gz"] {
            try Data().write(to: URL(fileURLWithPath: dir.file(file)))
        }
        // A link to a folder is not followed (it could lead back up); a link to a file is not
        // followed either (one to /dev/zero would read for ever, one to a private file would be
        // echoed in warnings): it is named in a warning.
        try fm.createSymbolicLink(atPath: dir.file("loop"), withDestinationPath: dir.path)
        try fm.createSymbolicLink(atPath: dir.file("linked.jsonl.gz"), withDestinationPath: dir.file("z.jsonl.gz"))
        let found = TraceFileDiscovery.find([dir.path + "/"])
        #expect(found.files == [".hidden-folder/w.jsonl.gz", "a/deeper/x.jsonl.gz", "b/y.jsonl", "z.jsonl.gz"].map { dir.path + "/" + $0 })
        #expect(found.warnings.map(\.description) == ["cannot read \(dir.path)/linked.jsonl.gz: is a symbolic link, which apitrace does not follow here; name the file it points to"])
        let missing = TraceFileDiscovery.find([dir.file("nope")])
        #expect(missing.files.isEmpty && missing.warnings.count == 1)
    }

    @Test func aHostileDepthOfFoldersIsWalkedWithoutRecursion() throws {
        let dir = TemporaryDirectory()
        // As deep as a path may be here (about 2,000 levels of one-letter folders).
        var path = dir.path
        while path.utf8.count < 4000 { path += "/d" }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: path + "/deep.jsonl.gz"))
        #expect(TraceFileDiscovery.find([dir.path]).files == [path + "/deep.jsonl.gz"])
    }
}
