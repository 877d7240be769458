extension Dictionary where Key == String, Value == Int {
    /// Most distinct keys a count keyed by file text keeps (drop reasons, log levels, SSE reasons,
    /// evidence); later keys are counted together under ``otherKey``.
    package static var boundedKeyLimit: Int { 100 }
    /// The key that holds what is past the limit.
    package static var otherKey: String { "(other)" }

    /// Adds `count` to `key`, or to `(other)` once the map holds ``boundedKeyLimit`` keys; saturating.
    package mutating func addBounded(_ key: String, _ count: Int, limit: Int = boundedKeyLimit) {
        let key = self[key] != nil || self.count < limit - 1 ? key : Self.otherKey
        self[key] = (self[key] ?? 0).addingSaturated(count)
    }

    /// Adds every count of `other` with ``addBounded(_:_:limit:)``.
    package mutating func mergeBounded(_ other: [String: Int], limit: Int = boundedKeyLimit) {
        for (key, count) in other { addBounded(key, count, limit: limit) }
    }
}
