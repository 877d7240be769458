public import Foundation
import APITraceFormat
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A `URLSession` stand-in that records one `request` event per task, for apps that call
/// `URLSession` directly: replace the session where it is created or injected, and every call site
/// keeps its shape (`data(for:)`, `upload`, `download`, and the completion-handler tasks).
///
/// ```swift
/// let session = TracedURLSession(.shared, tracer: .shared)
/// let (data, response) = try await session.data(for: URLRequest(url: url))
/// session.dataTask(with: url) { data, response, error in ... }.resume()
/// ```
///
/// Every task goes through ``TracedRequest``: the route is ``route(for:)`` (a template you map from
/// the request) or the path with ids replaced, the duration runs on the monotonic clock from the
/// call to the completion, the status and body size come from the response. Errors reach the
/// caller unchanged; a cancelled task is recorded as `URLError.cancelled`, a cancelled Swift task
/// as `CancellationError`.
///
/// On Apple platforms the event also carries the task's `URLSessionTaskMetrics`: DNS, connect and
/// TLS times, time to the first response byte, the protocol and connection reuse
/// (`TraceEvent.Request.Timing`). The wrapper becomes each task's own delegate for that callback
/// only and passes the metrics on to your session delegate. Linux's `URLSession` delivers no
/// metrics: there the event has the duration only.
public final class TracedURLSession: Sendable {
    /// The session doing the work.
    public let session: URLSession
    /// Where events go.
    public let tracer: APITracer
    /// Makes routes for requests ``route(for:)`` leaves to it.
    public let normalizer: RouteNormalizer
    /// Adds a W3C `traceparent` header (unless the request has one) and writes its trace id.
    public let injectsTraceParent: Bool
    /// A route template for a request, such as `/apps/{id}`; `nil` normalizes the path.
    public let route: @Sendable (URLRequest) -> String?

    /// Wraps `session`.
    public init(
        _ session: URLSession = .shared, tracer: APITracer = .shared, normalizer: RouteNormalizer = RouteNormalizer(),
        injectsTraceParent: Bool = false, route: @escaping @Sendable (URLRequest) -> String? = { _ in nil }
    ) {
        self.session = session
        self.tracer = tracer
        self.normalizer = normalizer
        self.injectsTraceParent = injectsTraceParent
        self.route = route
    }

    /// The route template for `request`.
    public func route(for request: URLRequest) -> String? { route(request) }

    // MARK: - Async

    /// Like `URLSession.data(for:)`.
    public func data(for request: URLRequest) async throws -> (Data, URLResponse) {
        try await run(request) { request, done in
            self.session.dataTask(with: request) { data, response, error in done(data.map { ($0, Int64($0.count)) }, response, error) }
        }
    }

    /// Like `URLSession.data(from:)`.
    public func data(from url: URL) async throws -> (Data, URLResponse) {
        try await data(for: URLRequest(url: url))
    }

    /// Like `URLSession.upload(for:from:)`.
    public func upload(for request: URLRequest, from bodyData: Data) async throws -> (Data, URLResponse) {
        try await run(request, bytesOut: Int64(bodyData.count)) { request, done in
            self.session.uploadTask(with: request, from: bodyData) { data, response, error in done(data.map { ($0, Int64($0.count)) }, response, error) }
        }
    }

    /// Like `URLSession.download(for:)`: the file is yours to move or delete.
    public func download(for request: URLRequest) async throws -> (URL, URLResponse) {
        try await run(request) { request, done in
            self.session.downloadTask(with: request) { location, response, error in
                // The system deletes `location` when this handler returns: keep a copy for the caller.
                var kept: (URL, Int64)?
                if let location {
                    let destination = FileManager.default.temporaryDirectory.appendingPathComponent("apitrace-download-" + UUID().uuidString)
                    do {
                        try FileManager.default.moveItem(at: location, to: destination)
                        let size = (try? FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber)?.int64Value
                        kept = (destination, size ?? 0)
                    } catch {
                        done(nil, response, error)
                        return
                    }
                }
                done(kept, response, error)
            }
        }
    }

    // MARK: - Completion handlers

    /// Like `URLSession.dataTask(with:completionHandler:)`; call `resume()` as usual.
    public func dataTask(
        with request: URLRequest, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDataTask {
        let (request, traced) = start(request, bytesOut: Int64(request.httpBody?.count ?? 0))
        let join = TaskTimingJoin.forTask()
        let task = session.dataTask(with: request) { data, response, error in
            Self.end(traced, join, response: response, bytesIn: data.map { Int64($0.count) }, error: error)
            completionHandler(data, response, error)
        }
        join?.attach(to: task)
        return task
    }

    /// Like `URLSession.dataTask(with:completionHandler:)` for a URL.
    public func dataTask(
        with url: URL, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDataTask {
        dataTask(with: URLRequest(url: url), completionHandler: completionHandler)
    }

    /// Like `URLSession.uploadTask(with:from:completionHandler:)`.
    public func uploadTask(
        with request: URLRequest, from bodyData: Data?, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionUploadTask {
        let (request, traced) = start(request, bytesOut: Int64(bodyData?.count ?? 0))
        let join = TaskTimingJoin.forTask()
        let task = session.uploadTask(with: request, from: bodyData) { data, response, error in
            Self.end(traced, join, response: response, bytesIn: data.map { Int64($0.count) }, error: error)
            completionHandler(data, response, error)
        }
        join?.attach(to: task)
        return task
    }

    /// Like `URLSession.downloadTask(with:completionHandler:)`.
    public func downloadTask(
        with request: URLRequest, completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDownloadTask {
        let (request, traced) = start(request, bytesOut: 0)
        let join = TaskTimingJoin.forTask()
        let task = session.downloadTask(with: request) { location, response, error in
            let size = location.flatMap { (try? FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? NSNumber)?.int64Value }
            Self.end(traced, join, response: response, bytesIn: size, error: error)
            completionHandler(location, response, error)
        }
        join?.attach(to: task)
        return task
    }

    // MARK: - Lifecycle

    private func start(_ request: URLRequest, bytesOut: Int64) -> (URLRequest, TracedRequest) {
        var request = request
        let url = request.url ?? URL(string: "about:blank")!
        let traced = tracer.startRequest(
            method: request.httpMethod ?? "GET", url: url, route: route(request), normalizer: normalizer,
            bytesOut: bytesOut, traceParent: request.value(forHTTPHeaderField: "traceparent"),
            injectsTraceParent: injectsTraceParent
        )
        if let header = traced.traceParentHeader { request.setValue(header, forHTTPHeaderField: "traceparent") }
        return (request, traced)
    }

    /// Records the task's end as of now, once `join` has the task's metrics (at once without a join).
    private static func end(
        _ traced: TracedRequest, _ join: TaskTimingJoin?, response: URLResponse?, bytesIn: Int64?, error: (any Error)?
    ) {
        let now = ContinuousClock.now
        let status = (response as? HTTPURLResponse)?.statusCode
        guard let join else { return record(traced, status: status, bytesIn: bytesIn, error: error, timing: nil, at: now) }
        join.complete { timing in record(traced, status: status, bytesIn: bytesIn, error: error, timing: timing, at: now) }
    }

    private static func record(
        _ traced: TracedRequest, status: Int?, bytesIn: Int64?, error: (any Error)?, timing: TraceEvent.Request.Timing?,
        at end: ContinuousClock.Instant
    ) {
        if let error {
            traced.fail(error, status: status, timing: timing, at: end)
        } else if let status {
            traced.finish(status: status, bytesIn: bytesIn, timing: timing, at: end)
        } else {
            traced.fail(URLError(.badServerResponse), timing: timing, at: end)
        }
    }

    /// Runs a completion-handler task as an async call, cancelling the task when the Swift task is.
    private func run<Value: Sendable>(
        _ request: URLRequest, bytesOut: Int64? = nil,
        _ makeTask: @escaping @Sendable (URLRequest, @escaping @Sendable ((Value, Int64)?, URLResponse?, (any Error)?) -> Void) -> URLSessionTask
    ) async throws -> (Value, URLResponse) {
        let (request, traced) = start(request, bytesOut: bytesOut ?? Int64(request.httpBody?.count ?? 0))
        let box = CancellableTask()
        let join = TaskTimingJoin.forTask()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Value, URLResponse), any Error>) in
                let task = makeTask(request) { value, response, error in
                    // A task cancelled because its Swift task was is a `CancellationError` to the caller.
                    let error = error.map { box.isCancelled && ($0 as? URLError)?.code == .cancelled ? CancellationError() : $0 }
                    Self.end(traced, join, response: response, bytesIn: value?.1, error: error ?? (value == nil ? URLError(.badServerResponse) : nil))
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let value, let response {
                        continuation.resume(returning: (value.0, response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                join?.attach(to: task)
                box.set(task)
                task.resume()
            }
        } onCancel: {
            box.cancel()
        }
    }
}
