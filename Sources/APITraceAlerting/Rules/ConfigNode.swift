import Yams

/// A node of a rules file with its field path, so every error names the file, line and field.
struct ConfigNode {
    let node: Node
    let path: String
    let file: String

    var line: Int? { node.mark?.line }

    func error(_ message: String) -> AlertConfigError {
        AlertConfigError(file: file, line: node.mark?.line, column: node.mark?.column, field: path.isEmpty ? nil : path, message: message)
    }

    /// The members of a mapping, rejecting keys not in `allowed` (typos fail loudly rather than being ignored).
    func members(allowed: [String]) throws(AlertConfigError) -> [String: ConfigNode] {
        guard let mapping = node.mapping else { throw error("expected a mapping of fields (key: value)") }
        var result: [String: ConfigNode] = [:]
        for (key, value) in mapping {
            guard let name = key.scalar?.string else {
                throw ConfigNode(node: key, path: path, file: file).error("expected a field name")
            }
            let child = ConfigNode(node: value, path: path.isEmpty ? name : "\(path).\(name)", file: file)
            guard allowed.contains(name) else {
                throw ConfigNode(node: key, path: child.path, file: file)
                    .error("unknown field; expected one of: \(allowed.joined(separator: ", "))")
            }
            guard result[name] == nil else { throw ConfigNode(node: key, path: child.path, file: file).error("field given twice") }
            result[name] = child
        }
        return result
    }

    /// The entries of a mapping with arbitrary keys (such as notifier names), in file order.
    func entries() throws(AlertConfigError) -> [(String, ConfigNode)] {
        guard let mapping = node.mapping else { throw error("expected a mapping of names to entries") }
        var result: [(String, ConfigNode)] = []
        for (key, value) in mapping {
            guard let name = key.scalar?.string, !name.isEmpty else {
                throw ConfigNode(node: key, path: path, file: file).error("expected a name")
            }
            result.append((name, ConfigNode(node: value, path: "\(path).\(name)", file: file)))
        }
        return result
    }

    func sequence() throws(AlertConfigError) -> [ConfigNode] {
        guard let items = node.sequence else { throw error("expected a list") }
        return items.enumerated().map { ConfigNode(node: $1, path: "\(path)[\($0)]", file: file) }
    }

    func string() throws(AlertConfigError) -> String {
        guard let scalar = node.scalar, node.null == nil || scalar.style != .plain else { throw error("expected text") }
        return scalar.string
    }

    func double() throws(AlertConfigError) -> Double {
        guard node.scalar != nil, let value = node.float ?? node.int.map(Double.init), value.isFinite else {
            throw error("expected a number; found \(describe())")
        }
        return value
    }

    func int() throws(AlertConfigError) -> Int {
        guard node.scalar != nil, let value = node.int else { throw error("expected a whole number; found \(describe())") }
        return value
    }

    func bool() throws(AlertConfigError) -> Bool {
        guard node.scalar != nil, let value = node.bool else { throw error("expected true or false; found \(describe())") }
        return value
    }

    func duration() throws(AlertConfigError) -> AlertDuration {
        guard let text = node.scalar?.string, let value = AlertDuration(parsing: text), value.milliseconds > 0 else {
            throw error("expected a duration such as 30s, 5m, 1h, 2d; found \(describe())")
        }
        return value
    }

    func describe() -> String {
        if let scalar = node.scalar { return scalar.string.isEmpty ? "nothing" : scalar.string }
        return node.mapping != nil ? "a mapping" : "a list"
    }
}
