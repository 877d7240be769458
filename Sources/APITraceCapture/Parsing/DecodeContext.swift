/// What a decode in progress is for: read by ``LossyArray`` to record skipped elements.
///
/// ``TracedJSONDecoder`` binds it for the duration of a decode, so nothing shared is mutated.
package struct DecodeContext: Sendable {
    /// Where decode failures go.
    package var tracer: APITracer
    /// Route of the response being decoded.
    package var route: String?

    /// Creates a context.
    package init(tracer: APITracer, route: String? = nil) {
        self.tracer = tracer
        self.route = route
    }

    /// The context of the decode running on this task or thread, if any.
    @TaskLocal package static var current: DecodeContext?
}
