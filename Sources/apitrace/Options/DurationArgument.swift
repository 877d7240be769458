import APITraceFormat
import ArgumentParser

/// A duration option in the one grammar of every command (``TimeGrammar``): `90s`, `1h30m`,
/// `1.5h`, `500ms`, or a bare number of seconds.
///
/// Parsed where the option is read, so a bad value is refused by the argument parser with the
/// option's name, and a command never handles the text itself.
struct DurationArgument: ExpressibleByArgument, Sendable, Equatable {
    /// The length in milliseconds.
    var milliseconds: Int64
    /// The text as given, shown as the default in `--help`.
    private var text: String

    init?(argument: String) {
        guard let milliseconds = TimeGrammar.milliseconds(argument) else { return nil }
        self.milliseconds = milliseconds
        self.text = argument
    }

    /// The length as a `Duration`.
    var duration: Duration { .milliseconds(milliseconds) }

    /// The length in seconds, rounded up (for headers such as `Retry-After`).
    var wholeSeconds: Int { Int((milliseconds + 999) / 1000) }

    var defaultValueDescription: String { text }

    static var allValueStrings: [String] { [] }
}

extension DurationArgument {
    /// A default value; the text must be a duration.
    init(_ text: String) {
        self = Self(argument: text)!
    }
}
