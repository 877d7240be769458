import HTTPTypes
public import Hummingbird
import Logging
import NIOCore

extension TraceCollector {
    /// Adds `POST <path>` (uploads), `GET /health` and `GET /metrics` to a Hummingbird router.
    ///
    /// The token is checked before the body is read, and a `Content-Length` over the limit is
    /// refused with 413 before reading it too. An upload that would pass the collector's bounds
    /// (``Configuration/maxConcurrentUploads``, ``Configuration/maxBytesInFlight``, the latter
    /// counting bytes received, not announced) is answered `503` with `Retry-After` and
    /// `Connection: close`, before or while its body is read.
    public func addRoutes<Context: RequestContext>(to router: Router<Context>, path: String = "/v1/traces") {
        router.post(RouterPath(path)) { request, context in
            try await self.handleUpload(request, context: context)
        }
        router.get("/health") { _, _ in
            Self.textResponse(200, "ok")
        }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: CollectorMetrics.contentType],
                body: ResponseBody(byteBuffer: ByteBuffer(string: self.metrics.openMetricsText)))
        }
    }

    private func handleUpload<Context: RequestContext>(_ request: Request, context: Context) async throws -> Response {
        let authorization = request.headers[.authorization]
        if let rejection = authorize(authorization) {
            return respond(reply(rejection), logger: context.logger)
        }
        let limit = configuration.maxBodyBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            return respond(reply(UploadRejection(.bodyTooLarge, "the body is \(length) bytes, more than the collector's limit of \(limit)")), logger: context.logger)
        }
        let declared = request.headers[.contentLength].flatMap(Int.init)
        // The share grows with the bytes received, never with the bytes announced: a client
        // announcing 64 MiB and sending a byte holds a byte, not a quarter of the bound.
        guard let ticket = admission.admit(initialBytes: 0) else { return busy(.uploads) }
        defer { ticket.release() }
        // Read by hand rather than with collect(upTo:), so the memory taken grows with the body and stays within the bounds.
        var buffer = ByteBuffer()
        for try await chunk in request.body {
            let total = buffer.readableBytes + chunk.readableBytes
            guard total <= limit else {
                return respond(reply(UploadRejection(.bodyTooLarge, "the body is more than the collector's limit of \(limit) bytes")), logger: context.logger)
            }
            guard ticket.grow(to: total) else { return busy(ticket.holdsSlot ? .bytes : .preempted) }
            if total > buffer.capacity {
                // Doubling, but never past the length announced: what is allocated stays within twice what was received.
                buffer.reserveCapacity(min(max(total, buffer.capacity * 2), max(total, declared ?? 0)))
            }
            buffer.writeImmutableBuffer(chunk)
        }
        ticket.finishedReading()
        guard ticket.holdsSlot else { return busy(.preempted) }
        let outcome = await receiveInBackground(
            authorization: authorization, contentDigest: request.headers[.contentDigest], body: buffer, ticket: ticket)
        return respond(outcome, logger: context.logger)
    }

    /// `503` with `Retry-After`: the collector is full; the uploader comes back later.
    private func busy(_ bound: CollectorMetrics.BusyReason) -> Response {
        respond(busyReply(bound), logger: nil)
    }

    private func respond(_ reply: Reply, logger: Logger?) -> Response {
        if let reason = reply.rejection {
            logger?.notice("upload refused", metadata: ["status": "\(reply.status)", "reason": "\(reason.rawValue)", "message": "\(reply.message)"])
        }
        var response = Self.textResponse(reply.status, reply.message)
        if reply.status == 401 { response.headers[.wwwAuthenticate] = "Bearer" }
        if let dropped = reply.droppedBytes { response.headers[.droppedBytes] = String(dropped) }
        if reply.status == 503 {
            response.headers[.retryAfter] = String(configuration.busyRetryAfterSeconds)
            response.headers[.connection] = "close"
        }
        return response
    }

    static func textResponse(_ status: Int, _ message: String) -> Response {
        Response(
            status: HTTPResponse.Status(code: status), headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
    }
}

extension HTTPField.Name {
    /// RFC 9530 `Content-Digest`.
    static let contentDigest = HTTPField.Name("Content-Digest")!
    /// Decompressed bytes of an incomplete last line dropped from a cut body.
    static let droppedBytes = HTTPField.Name("X-APITrace-Dropped-Bytes")!
}
