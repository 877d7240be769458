// libyaml as Yams builds it (Yams' own C target): its event parser, without Yams' recursive composer.
import CYaml

/// Bounds the nesting of a rules file before Yams builds its tree: Yams composes recursively, so
/// a file nested a few thousand levels deep (`[[[[…`, `- - - -…`, or indentation) overflows the
/// stack and kills every command that reads the rules, `--check-config` included.
///
/// The check walks libyaml's event stream, whose parser keeps its state on the heap rather than
/// the call stack, and counts open collections of every style (block, flow, compact `- - -`,
/// complex keys); it stops at the first one past the limit. An alias counts as deep as the node it
/// names (the composed tree nests that node there, and freeing it recurses as deep), but is never
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
            // Open collections, each with the deepest level reached inside it (aliases included).
            var open: [(anchor: String?, depth: Int, deepest: Int)] = []
            // The height of each anchored node: what an alias to it adds where it is used.
            var heights: [String: Int] = [:]
            func anchor(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
                pointer.map { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
            }
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else { return nil }
                defer { yaml_event_delete(&event) }
                let mark = (Int(event.start_mark.line) + 1, Int(event.start_mark.column) + 1)
                var reached: Int?
                switch event.type {
                case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                    let name = event.type == YAML_SEQUENCE_START_EVENT
                        ? anchor(event.data.sequence_start.anchor) : anchor(event.data.mapping_start.anchor)
                    open.append((name, open.count + 1, open.count + 1))
                    reached = open.count
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    guard let closed = open.popLast() else { break }
                    if let name = closed.anchor { heights[name] = closed.deepest - closed.depth + 1 }
                    if !open.isEmpty { open[open.count - 1].deepest = max(open[open.count - 1].deepest, closed.deepest) }
                case YAML_SCALAR_EVENT:
                    if let name = anchor(event.data.scalar.anchor) { heights[name] = 0 }
                case YAML_ALIAS_EVENT:
                    // An alias nests its anchor's whole node here: a chain of anchors, each a
                    // little deeper than the last, builds a tree far deeper than any one event run.
                    reached = open.count + (anchor(event.data.alias.anchor).flatMap { heights[$0] } ?? 0)
                case YAML_STREAM_END_EVENT:
                    return nil
                default:
                    break
                }
                if let reached {
                    if reached > limit { return mark }
                    if !open.isEmpty { open[open.count - 1].deepest = max(open[open.count - 1].deepest, reached) }
                }
            }
        }
    }
}
