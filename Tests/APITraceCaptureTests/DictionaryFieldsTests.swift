import APITraceTestSupport
import APITraceCapture
import Foundation
import Testing

@Suite("DictionaryFields: keys read with the key named in the error")
struct DictionaryFieldsTests {
    @Test("a value of the asked type is returned; missing, null and mistyped values name the key")
    func reads() throws {
        let fields = DictionaryFields(["id": 7, "name": "Fabric", "stability": NSNull(), "tags": "x"])
        #expect(try fields.required("id") as Int == 7)
        #expect(try fields.required("name", as: String.self) == "Fabric")
        #expect(throws: DictionaryParsingError(.keyNotFound, key: "owner")) { _ = try fields.required("owner") as String }
        #expect(throws: DictionaryParsingError(.valueNotFound, key: "stability", expected: "Double")) { _ = try fields.required("stability") as Double }
        #expect(throws: DictionaryParsingError(.typeMismatch, key: "tags", expected: "Array<String>")) { _ = try fields.required("tags") as [String] }
    }

    @Test("a nested entity's failure names the path from the outer entity")
    func nested() {
        #expect(throws: DictionaryParsingError(.keyNotFound, key: "name", path: ["owner"])) {
            _ = try OwnedApp(dictionary: ["owner": ["id": 1]])
        }
    }

    /// The compiler is the real part here: an app's source, compiled as code outside this package
    /// (no `-package-name`) against the built modules. A public method on `[String: Any]` would be
    /// a member of every dictionary of every app that links apitrace, and ambiguous wherever a
    /// second library the app imports adds its own `required(_:)` (a common Jayme-style helper).
    @Test("linking APITraceCapture adds no method to an app's [String: Any]; the wrapper is usable from outside")
    func appDictionariesGainNothing() async throws {
        let build = try BuiltModules.locate()
        let dir = TemporaryDirectory()

        let plain = dir.file("Plain.swift")
        try """
            import APITraceCapture

            let dictionary: [String: Any] = ["id": 1]
            let id: Int = try dictionary.required("id")
            """.write(toFile: plain, atomically: true, encoding: .utf8)
        let refused = try await runOffPool("/usr/bin/env", ["swiftc", "-typecheck", "-module-name", "UserApp"] + build.compilerFlags + [plain])
        let refusal = String(decoding: refused.stderr, as: UTF8.self)
        #expect(refused.status != 0, "an app's [String: Any] has a `required` method from APITraceCapture")
        #expect(refusal.contains("has no member 'required'"), "\(refusal)")

        let app = dir.file("App.swift")
        try """
            import APITraceCapture

            struct App: DictionaryInitializable {
                var id: Int
                var name: String
                init(dictionary: [String: Any]) throws {
                    let fields = DictionaryFields(dictionary)
                    id = try fields.required("id")
                    name = try fields.required("name", as: String.self)
                }
            }

            let app = try App(dictionary: ["id": 1, "name": "Fabric"])
            print(app.id, app.name)
            """.write(toFile: app, atomically: true, encoding: .utf8)
        let built = try await runOffPool("/usr/bin/env", ["swiftc", "-typecheck", "-module-name", "UserApp"] + build.compilerFlags + [app])
        #expect(built.status == 0, "the wrapper does not compile from outside the package:\n\(String(decoding: built.stderr, as: UTF8.self))")
    }
}

/// The debug build's Swift modules, found from the test binary, with what it takes to compile
/// against them as an outside app would (the C module maps of the build and of CZlib).
private struct BuiltModules {
    var modules: URL
    var root: URL
    var buildDirectory: URL

    static func locate() throws -> BuiltModules {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            for candidate in [dir.appendingPathComponent("Modules"), dir] where
                FileManager.default.fileExists(atPath: candidate.appendingPathComponent("APITraceCapture.swiftmodule").path) {
                var root = dir
                while root.path != "/", !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
                    root.deleteLastPathComponent()
                }
                return BuiltModules(modules: candidate, root: root, buildDirectory: dir)
            }
            dir.deleteLastPathComponent()
        }
        struct Missing: Error, CustomStringConvertible { let description: String }
        throw Missing(description: "no built APITraceCapture.swiftmodule above \(CommandLine.arguments[0])")
    }

    var compilerFlags: [String] {
        var flags = ["-I", modules.path, "-I", root.appendingPathComponent("Sources/CZlib").path]
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: buildDirectory.path)) ?? []
        for entry in entries.sorted() where entry.hasSuffix(".build") {
            let map = buildDirectory.appendingPathComponent(entry).appendingPathComponent("module.modulemap")
            if FileManager.default.fileExists(atPath: map.path) { flags += ["-Xcc", "-fmodule-map-file=\(map.path)"] }
        }
        return flags
    }
}
