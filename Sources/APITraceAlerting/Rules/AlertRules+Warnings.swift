/// What a rules file allows but probably does not mean: `apitrace alert --check-config` prints
/// these as warnings (exit status 0), naming the line.
extension AlertRules {
    /// One line per doubtful entry, e.g.
    /// `line 3: rule api-errors notifies nobody (no notify): its incidents are recorded but never paged`.
    package var configurationWarnings: [String] {
        rules.filter { $0.notify.isEmpty }.map { rule in
            "\(rule.line.map { "line \($0): " } ?? "")rule \(rule.name) notifies nobody (no `notify`): its incidents are recorded but never paged; add `notify: [<notifier>]`"
        }
    }
}
