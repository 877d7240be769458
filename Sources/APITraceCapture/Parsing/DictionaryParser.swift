import APITraceFormat
public import Foundation

/// Jayme-style parsing: response data to a JSON dictionary, then to ``DictionaryInitializable``
/// entities, recording every failure as a `decode_failure` instead of swallowing it with `try?`.
///
/// ```swift
/// let parser = DictionaryParser(tracer: .shared)
/// let app = try parser.entity(App.self, from: response.body, route: "/apps/{id}")
/// let apps = parser.entities(App.self, from: response.body, at: "data.apps", route: "/apps")  // skips bad ones
/// ```
public struct DictionaryParser: Sendable {
    /// Where failures go.
    public let tracer: APITracer

    /// Creates a parser.
    public init(tracer: APITracer = .shared) {
        self.tracer = tracer
    }

    /// The top-level JSON object of `data`; records and throws a `dataCorrupted` failure when it is not one.
    public func dictionary(from data: Data, entity: String = "Dictionary", route: String? = nil) throws -> [String: Any] {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            tracer.recordDecodeFailure(.init(route: route, entity: entity, kind: .dataCorrupted, path: "", message: "not valid JSON"))
            throw DictionaryParsingError(.dataCorrupted, key: "", expected: "JSON")
        }
        guard let dictionary = object as? [String: Any] else {
            tracer.recordDecodeFailure(.init(route: route, entity: entity, kind: .typeMismatch, path: "", message: "top level is not an object"))
            throw DictionaryParsingError(.typeMismatch, key: "", expected: "object")
        }
        return dictionary
    }

    /// Builds one entity from the object at `keyPath` (dot-separated, `nil` for the top level);
    /// records the failure and rethrows the original error.
    public func entity<E: DictionaryInitializable>(_ type: E.Type, from data: Data, at keyPath: String? = nil, route: String? = nil) throws -> E {
        let entity = String(describing: type)
        let root = try dictionary(from: data, entity: entity, route: route)
        let object = try value(at: keyPath, in: root, entity: entity, route: route)
        guard let dictionary = object as? [String: Any] else {
            throw recordMismatch(entity: entity, path: keyPath ?? "", expected: "object", route: route)
        }
        do {
            return try E(dictionary: dictionary)
        } catch {
            record(error, entity: entity, base: keyPath ?? "", route: route)
            throw error
        }
    }

    /// Builds every entity it can from the array at `keyPath`, skipping and recording each bad element
    /// (path `data.apps[3].stability`). Throws only when the array itself is missing or not an array.
    public func entities<E: DictionaryInitializable>(_ type: E.Type, from data: Data, at keyPath: String? = nil, route: String? = nil) throws -> [E] {
        let entity = String(describing: type)
        let object: Any
        if let keyPath {
            object = try value(at: keyPath, in: try dictionary(from: data, entity: entity, route: route), entity: entity, route: route)
        } else {
            do {
                object = try JSONSerialization.jsonObject(with: data)
            } catch {
                tracer.recordDecodeFailure(.init(route: route, entity: entity, kind: .dataCorrupted, path: "", message: "not valid JSON"))
                throw DictionaryParsingError(.dataCorrupted, key: "", expected: "JSON")
            }
        }
        guard let array = object as? [Any] else {
            throw recordMismatch(entity: entity, path: keyPath ?? "", expected: "array", route: route)
        }
        var result: [E] = []
        result.reserveCapacity(array.count)
        for (index, element) in array.enumerated() {
            let base = DecodePath.join(keyPath ?? "", "[\(index)]")
            guard let dictionary = element as? [String: Any] else {
                _ = recordMismatch(entity: entity, path: base, expected: "object", route: route)
                continue
            }
            do {
                result.append(try E(dictionary: dictionary))
            } catch {
                record(error, entity: entity, base: base, route: route)
            }
        }
        return result
    }

    private func value(at keyPath: String?, in root: [String: Any], entity: String, route: String?) throws -> Any {
        guard let keyPath, !keyPath.isEmpty else { return root }
        var current: Any = root
        var walked: [String] = []
        for key in keyPath.split(separator: ".").map(String.init) {
            guard let object = current as? [String: Any], let next = object[key] else {
                let error = DictionaryParsingError(.keyNotFound, key: key, path: walked)
                tracer.recordDecodeFailure(.init(route: route, entity: entity, kind: .keyNotFound, path: error.relativePath, key: key, message: error.description))
                throw error
            }
            walked.append(key)
            current = next
        }
        return current
    }

    private func record(_ error: any Error, entity: String, base: String, route: String?) {
        if let parsing = error as? DictionaryParsingError {
            tracer.recordDecodeFailure(.init(
                route: route, entity: entity, kind: parsing.kind, path: DecodePath.join(base, parsing.relativePath),
                key: parsing.key, message: parsing.description
            ))
        } else if let decoding = error as? DecodingError {
            var failure = TraceEvent.DecodeFailure(decoding, entity: entity, route: route)
            failure.path = DecodePath.join(base, failure.path)
            tracer.recordDecodeFailure(failure)
        } else {
            tracer.recordDecodeFailure(.init(route: route, entity: entity, kind: .dataCorrupted, path: base, message: String(describing: error)))
        }
    }

    private func recordMismatch(entity: String, path: String, expected: String, route: String?) -> DictionaryParsingError {
        tracer.recordDecodeFailure(.init(route: route, entity: entity, kind: .typeMismatch, path: path, message: "expected \(expected)"))
        let key = path.split(separator: ".").last.map(String.init) ?? ""
        return DictionaryParsingError(.typeMismatch, key: key, expected: expected)
    }
}
