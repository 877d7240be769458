// swift-tools-version: 6.0
import PackageDescription

// The modules follow the data:
//   APITraceCapture (in the client) -> APITraceFormat (trace files) -> APITraceAnalysis -> apitrace (CLI)
// A lower module never imports a higher one. APITraceTesting (users' tests: a scoped tracer, a stub
// backend, synthetic traces) sits beside capture; the CLI's `generate` and the benchmarks use it.
let package = Package(
    name: "apitrace",
    // The floors are what the code needs: ContinuousClock and Duration (macOS 13, iOS 16, tvOS 16,
    // watchOS 9); locks are the format module's `Locked`, not Synchronization.Mutex (macOS 15 / iOS 18).
    // Nothing in the libraries is Linux-only outside `#if` (Scripts/check-portability.sh checks).
    // Inferred, not built: this machine cannot build for Apple platforms.
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "APITraceFormat", targets: ["APITraceFormat"]),
        .library(name: "APITraceCapture", targets: ["APITraceCapture"]),
        .library(name: "APITraceSSE", targets: ["APITraceSSE"]),
        .library(name: "APITraceWebSocket", targets: ["APITraceWebSocket"]),
        .library(name: "APITraceOpenAPI", targets: ["APITraceOpenAPI"]),
        .library(name: "APITraceDistributedTracing", targets: ["APITraceDistributedTracing"]),
        .library(name: "APITraceAlerting", targets: ["APITraceAlerting"]),
        .library(name: "APITraceAnalysis", targets: ["APITraceAnalysis"]),
        .library(name: "APITraceUpload", targets: ["APITraceUpload"]),
        .library(name: "APITraceCollector", targets: ["APITraceCollector"]),
        .library(name: "APITraceTesting", targets: ["APITraceTesting"]),
        .executable(name: "apitrace", targets: ["apitrace"]),
        .executable(name: "apitrace-bench", targets: ["apitrace-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.0.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.0.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.1.0"),
        // The WebSocket client on Linux (and on Apple platforms when the app prefers it); only
        // APITraceWebSocket links it.
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        // Only the AsyncHTTPClient sample and its test use it; no library links it.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.20.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        .target(
            name: "APITraceFormat",
            dependencies: ["CZlib"]
        ),
        .target(
            name: "APITraceCapture",
            dependencies: [
                "APITraceFormat",
                .product(name: "Logging", package: "swift-log"),
            ],
            // Apple's privacy manifest: file metadata (a required-reason API) is read.
            resources: [.copy("Resources/PrivacyInfo.xcprivacy")]
        ),
        .target(
            name: "APITraceSSE",
            dependencies: ["APITraceFormat", "APITraceCapture"]
        ),
        .target(
            name: "APITraceWebSocket",
            dependencies: [
                "APITraceFormat",
                "APITraceCapture",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "APITraceExport",
            dependencies: ["APITraceFormat"]
        ),
        .target(
            name: "APITraceOpenAPI",
            dependencies: [
                "APITraceCapture",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "APITraceDistributedTracing",
            dependencies: [
                "APITraceCapture",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "APITraceAlerting",
            dependencies: [
                "APITraceFormat",
                "APITraceAnalysis",
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .target(
            name: "APITraceAnalysis",
            dependencies: [
                "APITraceFormat",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        .target(
            name: "APITraceTesting",
            dependencies: ["APITraceFormat", "APITraceCapture"]
        ),
        .target(
            name: "APITraceUpload",
            dependencies: [
                "APITraceFormat",
                "APITraceCapture",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "APITraceCollector",
            dependencies: [
                "APITraceFormat",
                "APITraceExport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "apitrace",
            dependencies: [
                "APITraceFormat",
                "APITraceCapture",
                "APITraceSSE",
                "APITraceWebSocket",
                "APITraceExport",
                "APITraceAlerting",
                "APITraceAnalysis",
                "APITraceCollector",
                "APITraceTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "apitrace-bench",
            dependencies: [
                "APITraceFormat",
                "APITraceCapture",
                "APITraceSSE",
                "APITraceAlerting",
                "APITraceAnalysis",
                "APITraceUpload",
                "APITraceDistributedTracing",
                "APITraceWebSocket",
                "APITraceTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "OtecNewsServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Samples/NewsServer"
        ),
        .executableTarget(
            name: "otec-news-server",
            dependencies: [
                "OtecNewsServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/NewsServerMain"
        ),
        .target(
            name: "OtecNewsClient",
            dependencies: ["APITraceCapture", "APITraceSSE"],
            path: "Samples/NewsClient"
        ),
        .target(
            name: "OtecNewsServerSideClient",
            dependencies: [
                "APITraceCapture",
                "APITraceDistributedTracing",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Samples/NewsServerSideClient"
        ),
        .target(
            name: "OtecNewsFutureClient",
            dependencies: ["APITraceCapture"],
            path: "Samples/NewsFutureClient"
        ),
        .executableTarget(
            name: "apitrace-demo",
            dependencies: [
                "OtecNewsServer",
                "OtecNewsClient",
                "APITraceCapture",
                "APITraceAnalysis",
                "APITraceAlerting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/Demo"
        ),
        .executableTarget(
            name: "trace-producer-fixture",
            dependencies: ["APITraceFormat"],
            path: "Tests/Fixtures/TraceProducer"
        ),
        .target(
            name: "APITraceTestSupport",
            dependencies: [
                "APITraceFormat",
                "APITraceTesting",
                "APITraceCollector",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/Support"
        ),
        .testTarget(
            name: "APITraceFormatTests",
            dependencies: ["APITraceTestSupport", "APITraceFormat", "trace-producer-fixture"]
        ),
        .testTarget(
            name: "APITraceExportTests",
            dependencies: ["APITraceTestSupport", "APITraceExport", "APITraceFormat", "APITraceCollector"]
        ),
        .testTarget(
            name: "APITraceSSETests",
            dependencies: ["APITraceTestSupport", "APITraceSSE", "APITraceCapture", "APITraceFormat"]
        ),
        .testTarget(
            name: "APITraceWebSocketTests",
            dependencies: ["APITraceTestSupport", "APITraceWebSocket", "APITraceCapture", "APITraceFormat"]
        ),
        .testTarget(
            name: "APITraceCaptureTests",
            dependencies: [
                "APITraceTestSupport",
                "APITraceCapture",
                "APITraceFormat",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "APITraceDistributedTracingTests",
            dependencies: [
                "APITraceTestSupport",
                "APITraceCapture",
                "APITraceFormat",
                "APITraceTesting",
                "APITraceDistributedTracing",
                "OtecNewsServer",
                "OtecNewsServerSideClient",
                "OtecNewsFutureClient",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "APITraceOpenAPITests",
            dependencies: [
                "APITraceTestSupport",
                "APITraceOpenAPI",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "APITraceAlertingTests",
            dependencies: [
                "APITraceTestSupport",
                "APITraceAlerting",
                "APITraceFormat",
            ]
        ),
        .testTarget(
            name: "APITraceDemoTests",
            dependencies: ["APITraceTestSupport", "apitrace-demo", "apitrace"]
        ),
        .testTarget(
            name: "APITraceAnalysisTests",
            dependencies: [
                "APITraceTestSupport", "APITraceAnalysis", "APITraceFormat", "APITraceTesting",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        .testTarget(
            name: "APITraceTestingTests",
            dependencies: [
                "APITraceTestSupport",
                "APITraceTesting",
                "APITraceCapture",
                "APITraceFormat",
            ]
        ),
        // The tests of the built `apitrace`, a folder per subcommand (Tests/APITraceCLITests/<Subcommand>/);
        // the libraries are there for independent checks of what the binary wrote.
        .testTarget(
            name: "APITraceCLITests",
            dependencies: [
                "apitrace",
                "trace-uploader-fixture",
                "APITraceTestSupport",
                "APITraceFormat",
                "APITraceTesting",
                "APITraceAnalysis",
                "APITraceAlerting",
                "APITraceCollector",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "trace-uploader-fixture",
            dependencies: ["APITraceFormat", "APITraceUpload"],
            path: "Tests/Fixtures/TraceUploader"
        ),
        .testTarget(
            name: "APITraceCollectionTests",
            dependencies: [
                "APITraceTestSupport",
                "APITraceFormat",
                "APITraceUpload",
                "APITraceCollector",
                "trace-uploader-fixture",
                "trace-producer-fixture",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
