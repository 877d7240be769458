public import Foundation

/// Where and how an OTLP/HTTP export sends, configured as OpenTelemetry's exporter specification
/// defines it: a base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`) to which `v1/traces`, `v1/logs` and
/// `v1/metrics` are appended, or per-signal URLs used as they are
/// (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`...); headers (`OTEL_EXPORTER_OTLP_HEADERS`,
/// `key=value` pairs separated by commas, values percent-decoded), typically for authentication;
/// protocol (`OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf`, the default, or `http/json`) and
/// compression (`OTEL_EXPORTER_OTLP_COMPRESSION`: `gzip`, the default here, or `none`).
///
/// Header values are secrets: nothing here or in ``OTLPSender`` ever prints them.
public struct OTLPEndpoint: Sendable {
    /// The three OTLP signals.
    public enum Signal: String, Sendable, CaseIterable {
        case traces, logs, metrics
    }

    /// The payload encoding.
    public enum Encoding: String, Sendable {
        case protobuf = "http/protobuf"
        case json = "http/json"

        /// The `Content-Type` header.
        public var contentType: String { self == .protobuf ? "application/x-protobuf" : "application/json" }
    }

    /// The URL each signal is posted to.
    public var urls: [Signal: URL]
    /// Headers sent with every request (authentication): never printed.
    public var headers: [(name: String, value: String)]
    /// The payload encoding.
    public var encoding: Encoding
    /// Whether bodies are gzip-compressed (`Content-Encoding: gzip`).
    public var gzip: Bool

    /// An endpoint with every signal under `base`, as `OTEL_EXPORTER_OTLP_ENDPOINT` is read.
    public init(base: URL, headers: [(name: String, value: String)] = [], encoding: Encoding = .protobuf, gzip: Bool = true) {
        var urls: [Signal: URL] = [:]
        for signal in Signal.allCases { urls[signal] = Self.append(signal, to: base) }
        self.urls = urls
        self.headers = headers
        self.encoding = encoding
        self.gzip = gzip
    }

    /// `base` with `v1/<signal>` appended after exactly one `/`.
    static func append(_ signal: Signal, to base: URL) -> URL {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + "/v1/" + signal.rawValue) ?? base
    }

    /// The host and port an error message may name (never the path, query or user information).
    public func displayName(_ signal: Signal) -> String {
        guard let url = urls[signal] else { return "the OTLP endpoint" }
        let port = url.port.map { ":\($0)" } ?? ""
        return "\(url.scheme ?? "http")://\(url.host ?? "?")\(port)/v1/\(signal.rawValue)"
    }

    /// Reads the endpoint from `endpoint` (a command-line base URL, which wins) and the
    /// `OTEL_EXPORTER_OTLP_*` variables of `environment`; `encoding` from the command line wins too.
    ///
    /// - Throws: ``OTLPConfigurationError`` naming the variable or option that is wrong (never a header's value).
    public static func configure(
        endpoint: String?, encoding: Encoding? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(OTLPConfigurationError) -> OTLPEndpoint {
        func url(_ text: String, _ source: String) throws(OTLPConfigurationError) -> URL {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  url.host?.isEmpty == false
            else { throw OTLPConfigurationError("\(source) is not an http:// or https:// URL") }
            guard url.user == nil, url.password == nil else {
                throw OTLPConfigurationError("\(source) carries user information; pass credentials in OTEL_EXPORTER_OTLP_HEADERS")
            }
            return url
        }
        let baseText = endpoint ?? environment["OTEL_EXPORTER_OTLP_ENDPOINT"]
        var result: OTLPEndpoint
        if let baseText {
            result = OTLPEndpoint(base: try url(baseText, endpoint != nil ? "--endpoint" : "OTEL_EXPORTER_OTLP_ENDPOINT"))
        } else {
            result = OTLPEndpoint(base: URL(string: "http://localhost:4318")!)
        }
        for signal in Signal.allCases {
            let name = "OTEL_EXPORTER_OTLP_\(signal.rawValue.uppercased())_ENDPOINT"
            if endpoint == nil, let text = environment[name] { result.urls[signal] = try url(text, name) }
        }
        result.headers = try parseHeaders(environment["OTEL_EXPORTER_OTLP_HEADERS"] ?? "", variable: "OTEL_EXPORTER_OTLP_HEADERS")
        if let encoding {
            result.encoding = encoding
        } else if let text = environment["OTEL_EXPORTER_OTLP_PROTOCOL"] {
            guard let parsed = Encoding(rawValue: text) else {
                throw OTLPConfigurationError("OTEL_EXPORTER_OTLP_PROTOCOL \(text.prefix(40)) is not http/protobuf or http/json")
            }
            result.encoding = parsed
        }
        switch environment["OTEL_EXPORTER_OTLP_COMPRESSION"]?.lowercased() {
        case nil, "gzip": result.gzip = true
        case "none": result.gzip = false
        default: throw OTLPConfigurationError("OTEL_EXPORTER_OTLP_COMPRESSION must be gzip or none")
        }
        return result
    }

    /// `key1=value1,key2=value2`, values percent-decoded; errors name the entry's position, not its text.
    static func parseHeaders(_ text: String, variable: String) throws(OTLPConfigurationError) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        let tokenCharacters = CharacterSet(charactersIn: "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        for (i, entry) in text.split(separator: ",", omittingEmptySubsequences: true).enumerated() {
            guard let equals = entry.firstIndex(of: "=") else {
                throw OTLPConfigurationError("\(variable): entry \(i + 1) is not key=value")
            }
            let name = entry[..<equals].trimmingCharacters(in: .whitespaces)
            let raw = entry[entry.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.unicodeScalars.allSatisfy(tokenCharacters.contains) else {
                throw OTLPConfigurationError("\(variable): entry \(i + 1) has no valid header name")
            }
            let value = raw.removingPercentEncoding ?? raw
            // A CR, LF or NUL would split the request's headers.
            guard !value.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7f }) else {
                throw OTLPConfigurationError("\(variable): the value of header \(name) holds control characters")
            }
            headers.append((name, value))
        }
        return headers
    }
}

/// An OTLP endpoint that cannot be used, naming the option or variable (never a secret).
public struct OTLPConfigurationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var description: String

    init(_ description: String) { self.description = description }
}
