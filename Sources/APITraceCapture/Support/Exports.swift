// Users write `import APITraceCapture` and get the event types and the file writer too.
@_exported import APITraceFormat
