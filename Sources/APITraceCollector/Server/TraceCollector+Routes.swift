import HTTPTypes
import Hummingbird
import Logging
import NIOCore

extension TraceCollector {
    /// Adds `POST <path>` (uploads), `GET /health` and `GET /metrics` to a Hummingbird router.
    ///
    /// The token is checked before the body is read, and a `Content-Length` over the limit is
    /// refused with 413 before reading it too.
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
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            return respond(reply(UploadRejection(.bodyTooLarge, "the body is more than the collector's limit of \(limit) bytes")), logger: context.logger)
        }
        let body = buffer.getBytes(at: buffer.readerIndex, length: buffer.readableBytes) ?? []
        let outcome = await receiveInBackground(
            authorization: authorization, contentDigest: request.headers[.contentDigest], body: body)
        return respond(outcome, logger: context.logger)
    }

    private func respond(_ reply: Reply, logger: Logger) -> Response {
        if let reason = reply.rejection {
            logger.notice("upload refused", metadata: ["status": "\(reply.status)", "reason": "\(reason.rawValue)", "message": "\(reply.message)"])
        }
        var response = Self.textResponse(reply.status, reply.message)
        if reply.status == 401 { response.headers[.wwwAuthenticate] = "Bearer" }
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
}
