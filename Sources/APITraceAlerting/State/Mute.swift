/// A time-bounded silence, as Alertmanager has them: for one rule or all, with who and why.
public struct Mute: Sendable, Equatable, Codable {
    /// Short id to unmute by.
    public var id: String
    /// The muted rule; nil mutes every rule.
    public var rule: String?
    /// When it was created (ms since 1970).
    public var created: Int64
    /// When it ends.
    public var until: Int64
    /// Who created it (`$USER`).
    public var createdBy: String?
    /// Why.
    public var comment: String?
    /// The one group of a grouped rule it silences (``AlertGroup/label``, `route=/profile`); nil: all of them.
    public var group: String?

    /// Creates a mute.
    public init(id: String, rule: String?, created: Int64, until: Int64, createdBy: String?, comment: String?) {
        self.id = id
        self.rule = rule
        self.created = created
        self.until = until
        self.createdBy = createdBy
        self.comment = comment
    }
}
