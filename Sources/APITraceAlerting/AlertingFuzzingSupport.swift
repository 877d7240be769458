/// What the alert-rules fuzz target (Fuzz/, a package of its own that cannot see `package`
/// declarations) needs from this module, behind an SPI so apps never see it:
/// `@_spi(Fuzzing) import APITraceAlerting`.
///
/// The module has no public API of its own: rules, detection, incidents and notifiers are
/// `apitrace alert`'s, shared with the CLI, the demo and the tests as `package` declarations.
@_spi(Fuzzing) public enum AlertingFuzzingSupport {
    /// Parses `text` as a rules file named `file`, as `apitrace alert --rules` does; throws the
    /// configuration error (file, line, column, message) a bad file gets.
    @_spi(Fuzzing) public static func parseRules(_ text: String, file: String) throws {
        _ = try AlertRules.parse(text, file: file)
    }
}
