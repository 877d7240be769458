/// The groups of grouped rules, merged file by file under each rule's `max_groups`: a group
/// keeps counts of its own once it has a place, and a group that finds every place taken is
/// added to the `(other)` group, so memory follows the cap, not the number of distinct routes.
///
/// Within a file, groups take the free places busiest first (requests and failures, failures
/// counting twice; then by key), so which groups are named does not depend on hashing order.
struct GroupMerge {
    private let keys: [[AlertGroup.Key]]
    private let caps: [Int]
    private var runs: [[String: BucketRun]]
    /// Per rule: true when some group went to `(other)`.
    private(set) var overflowed: [Bool]

    init(rules: [AlertRule]) {
        keys = rules.map(\.groupBy)
        caps = rules.map(\.maxGroups)
        runs = Array(repeating: [:], count: rules.count)
        overflowed = Array(repeating: false, count: rules.count)
    }

    mutating func merge(_ file: ScanPlan.FileCounts) {
        for r in runs.indices where !keys[r].isEmpty && r < file.groups.count {
            if file.overflowed[r] { overflowed[r] = true }
            let named = file.groups[r].filter { $0.key != AlertGroup.otherCountingKey }
            var order: [(key: String, requests: Double)] = []
            for (key, run) in named {
                let weight: Double = run.requests.reduce(0, +) + run.failures.reduce(0, +)
                order.append((key: key, requests: weight))
            }
            let sorted = order.sorted { a, b in a.requests != b.requests ? a.requests > b.requests : a.key < b.key }
            for entry in sorted {
                let key = entry.key
                let run = named[key]!
                let taken = runs[r].count - (runs[r][AlertGroup.otherCountingKey] == nil ? 0 : 1)
                if runs[r][key] != nil || taken < caps[r] {
                    runs[r][key, default: BucketRun()].merge(run)
                } else {
                    overflowed[r] = true
                    runs[r][AlertGroup.otherCountingKey, default: BucketRun()].merge(run)
                }
            }
            if let other = file.groups[r][AlertGroup.otherCountingKey] {
                runs[r][AlertGroup.otherCountingKey, default: BucketRun()].merge(other)
            }
        }
    }

    /// Each rule's groups with their prefix sums.
    func counts(bucketMilliseconds: Int64) -> [[AlertGroup: FailureCounts]] {
        runs.indices.map { r in
            var out: [AlertGroup: FailureCounts] = [:]
            for (key, run) in runs[r] {
                out[AlertGroup(keys: keys[r], countingKey: key)] = FailureCounts(
                    bucketMilliseconds: bucketMilliseconds, firstBucket: run.first, requests: run.requests, failures: run.failures)
            }
            return out
        }
    }
}
