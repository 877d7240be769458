public import Foundation

/// Route templates by operation id, read from the OpenAPI document the client was generated from,
/// so ``TracingClientMiddleware`` needs no hand-written map.
///
/// ```swift
/// let document = Bundle.main.url(forResource: "openapi", withExtension: "yaml")!
/// let middleware = TracingClientMiddleware(tracer: .shared, routes: try OpenAPIRoutes.load(contentsOf: document))
/// ```
///
/// Reads JSON documents and the block-style YAML that OpenAPI documents are written in: every
/// `operationId` under `paths` gives its path template (`getApp` -> `/apps/{appID}`).
public enum OpenAPIRoutes {
    /// An OpenAPI document that could not be read.
    public struct ReadError: Error, CustomStringConvertible {
        /// What went wrong, naming the file and line where known.
        public var description: String
    }

    /// The routes of the document at `url`.
    public static func load(contentsOf url: URL) throws -> [String: String] {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw ReadError(description: "cannot read OpenAPI document \(url.path): \(error)")
        }
        return try parse(text, source: url.path)
    }

    /// The routes of a document's text; `source` names it in errors.
    public static func parse(_ text: String, source: String = "document") throws -> [String: String] {
        let trimmed = text.drop(while: { $0.isWhitespace })
        if trimmed.first == "{" { return try parseJSON(Data(text.utf8), source: source) }
        return try parseYAML(text, source: source)
    }

    private static func parseJSON(_ data: Data, source: String) throws -> [String: String] {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ReadError(description: "\(source): not a JSON object")
        }
        guard let paths = root["paths"] as? [String: Any] else {
            throw ReadError(description: "\(source): no `paths` object")
        }
        var routes: [String: String] = [:]
        for (path, item) in paths {
            guard let operations = item as? [String: Any] else { continue }
            for (_, operation) in operations {
                if let id = (operation as? [String: Any])?["operationId"] as? String { routes[id] = path }
            }
        }
        return routes
    }

    private static func parseYAML(_ text: String, source: String) throws -> [String: String] {
        var routes: [String: String] = [:]
        var pathsIndent: Int?
        var pathIndent: Int?
        var currentPath: String?
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            let content = line.drop(while: { $0 == " " })
            if content.isEmpty || content.hasPrefix("#") { continue }
            let indent = line.count - content.count
            if let top = pathsIndent, indent <= top {
                pathsIndent = nil  // left `paths`
                currentPath = nil
            }
            if pathsIndent == nil {
                if content.hasPrefix("paths:") { pathsIndent = indent; pathIndent = nil }
                continue
            }
            if pathIndent == nil || indent <= pathIndent! {
                guard content.hasSuffix(":") else { continue }
                var key = String(content.dropLast())
                if key.count >= 2, key.first == "\"" || key.first == "'", key.last == key.first { key = String(key.dropFirst().dropLast()) }
                guard key.hasPrefix("/") else {
                    throw ReadError(description: "\(source):\(number + 1): expected a path under `paths`, found `\(content)`")
                }
                pathIndent = indent
                currentPath = key
                continue
            }
            if content.hasPrefix("operationId:"), let path = currentPath {
                var id = content.dropFirst("operationId:".count).trimmingCharacters(in: .whitespaces)
                if id.count >= 2, id.first == "\"" || id.first == "'", id.last == id.first { id = String(id.dropFirst().dropLast()) }
                routes[id] = path
            }
        }
        return routes
    }
}
