/// Writes coding paths the way traces show them: `data.apps[3].stability`.
package enum DecodePath {
    /// The path for `codingPath`: keys joined with `.`, array indices as `[n]`.
    package static func string(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == String(index) {
                text += "[\(index)]"
            } else {
                if !text.isEmpty { text += "." }
                text += key.stringValue
            }
        }
        return text
    }

    /// Joins a base path and a relative one: `data.apps` + `[3]` or `stability`.
    static func join(_ base: String, _ tail: String) -> String {
        if base.isEmpty { return tail }
        if tail.isEmpty { return base }
        return tail.hasPrefix("[") ? base + tail : base + "." + tail
    }
}
