import APITraceExport
import Foundation
import Testing

/// `OTLPEndpoint.configure`: the OTEL_EXPORTER_OTLP_* variables as the exporter specification reads them.
@Suite("OTLP endpoint configuration")
struct OTLPEndpointTests {
    @Test("a base URL gets /v1/<signal>; per-signal URLs are used as they are; the option wins over the variable")
    func urls() throws {
        let env = ["OTEL_EXPORTER_OTLP_ENDPOINT": "https://otel.example.com:4318/base/", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "https://logs.example.com/custom"]
        let e = try OTLPEndpoint.configure(endpoint: nil, environment: env)
        #expect(e.urls[.traces]?.absoluteString == "https://otel.example.com:4318/base/v1/traces")
        #expect(e.urls[.metrics]?.absoluteString == "https://otel.example.com:4318/base/v1/metrics")
        #expect(e.urls[.logs]?.absoluteString == "https://logs.example.com/custom")
        let o = try OTLPEndpoint.configure(endpoint: "http://127.0.0.1:9", environment: env)
        #expect(o.urls[.logs]?.absoluteString == "http://127.0.0.1:9/v1/logs")
        #expect(try OTLPEndpoint.configure(endpoint: nil, environment: [:]).urls[.traces]?.absoluteString == "http://localhost:4318/v1/traces")
    }

    @Test("headers: key=value pairs, percent-decoded; a malformed entry is named by position, its secret never printed")
    func headers() throws {
        let e = try OTLPEndpoint.configure(endpoint: nil, environment: ["OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20s3cr3t-token , x-team=core"])
        #expect(e.headers.map(\.name) == ["Authorization", "x-team"])
        #expect(e.headers.map(\.value) == ["Bearer s3cr3t-token", "core"])
        for bad in ["api-key s3cr3t-token", "=s3cr3t-token", "x=s3cr3t-token%0D%0AInjected: 1", "bad name=s3cr3t-token"] {
            do {
                _ = try OTLPEndpoint.configure(endpoint: nil, environment: ["OTEL_EXPORTER_OTLP_HEADERS": bad])
                Issue.record("\(bad.prefix(8)) accepted")
            } catch {
                #expect(error.description.contains("OTEL_EXPORTER_OTLP_HEADERS"))
                #expect(!error.description.contains("s3cr3t"))
            }
        }
    }

    @Test("protocol and compression variables; bad URLs and user information in the URL refused")
    func options() throws {
        let e = try OTLPEndpoint.configure(endpoint: nil, environment: ["OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_COMPRESSION": "none"])
        #expect(e.encoding == .json && !e.gzip)
        #expect(try OTLPEndpoint.configure(endpoint: nil, encoding: .protobuf, environment: ["OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"]).encoding == .protobuf)
        #expect(throws: OTLPConfigurationError.self) { try OTLPEndpoint.configure(endpoint: nil, environment: ["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"]) }
        #expect(throws: OTLPConfigurationError.self) { try OTLPEndpoint.configure(endpoint: "ftp://x", environment: [:]) }
        do {
            _ = try OTLPEndpoint.configure(endpoint: "https://user:pa55word@otel.example.com", environment: [:])
            Issue.record("user information accepted")
        } catch {
            #expect(!error.description.contains("pa55word"))
        }
    }
}
