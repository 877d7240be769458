import CYaml

/// Bounds the nesting of a rules file before Yams builds its tree: Yams composes recursively, so
/// a file nested a few thousand levels deep (`[[[[…`, `- - - -…`, or indentation) overflows the
/// stack and kills every command that reads the rules, `--check-config` included.
///
/// The check walks libyaml's event stream, whose parser keeps its state on the heap rather than
/// the call stack, and counts open collections of every style (block, flow, compact `- - -`,
/// complex keys); it stops at the first one past the limit. Aliases are events of their own, not
/// expanded, so a "billion laughs" file costs its size here too.
enum YAMLNestingCheck {
    /// Deepest nesting a rules file may have; real ones stay under 6.
    static let maximumDepth = 64

    /// Nothing when `text` nests at most `limit` collections deep (or is not valid YAML: Yams then
    /// reports the syntax error); otherwise the 1-based line and column where it goes deeper.
    static func firstTooDeep(_ text: String, limit: Int = maximumDepth) -> (line: Int, column: Int)? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return nil }
        defer { yaml_parser_delete(&parser) }
        yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBufferPointer { buffer -> (line: Int, column: Int)? in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var depth = 0
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else { return nil }
                defer { yaml_event_delete(&event) }
                switch event.type {
                case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                    depth += 1
                    if depth > limit { return (Int(event.start_mark.line) + 1, Int(event.start_mark.column) + 1) }
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    depth -= 1
                case YAML_STREAM_END_EVENT:
                    return nil
                default:
                    break
                }
            }
        }
    }
}
