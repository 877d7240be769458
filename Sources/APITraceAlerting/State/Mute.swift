/// A time-bounded silence, as Alertmanager has them: for one rule or all, with who and why.
package struct Mute: Sendable, Equatable, Codable {
    /// Short id to unmute by.
    package var id: String
    /// The muted rule; nil mutes every rule.
    package var rule: String?
    /// When it was created (ms since 1970).
    package var created: Int64
    /// When it ends.
    package var until: Int64
    /// Who created it (`$USER`).
    package var createdBy: String?
    /// Why.
    package var comment: String?
    /// The one group of a grouped rule it silences (``AlertGroup/label``, `route=/profile`); nil: all of them.
    package var group: String?

    /// Creates a mute.
    package init(id: String, rule: String?, created: Int64, until: Int64, createdBy: String?, comment: String?) {
        self.id = id
        self.rule = rule
        self.created = created
        self.until = until
        self.createdBy = createdBy
        self.comment = comment
    }
}
