extension APITracer {
    /// A tracer bound to the current task and the tasks it starts (not detached ones), which
    /// ``shared`` returns in front of the bootstrapped one.
    ///
    /// A task-local rather than a second global, so that tests running in parallel, each scoped to
    /// a tracer of its own, never see each other's events. `APITraceTesting` binds it.
    @TaskLocal package static var scoped: APITracer?
}
