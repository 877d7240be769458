// swift-tools-version: 6.0
import PackageDescription

// The modules follow the data:
//   APITraceCapture (in the client) -> APITraceFormat (trace files) -> APITraceAnalysis -> apitrace (CLI)
// A lower module never imports a higher one.
let package = Package(
    name: "apitrace",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "APITraceFormat", targets: ["APITraceFormat"]),
        .library(name: "APITraceCapture", targets: ["APITraceCapture"]),
        .library(name: "APITraceUpload", targets: ["APITraceUpload"]),
        .library(name: "APITraceCollector", targets: ["APITraceCollector"]),
        .executable(name: "apitrace", targets: ["apitrace"]),
        .executable(name: "apitrace-bench", targets: ["apitrace-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.0.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.0.0"),
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
            ]
        ),
        .target(
            name: "APITraceUpload",
            dependencies: [
                "APITraceFormat",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "APITraceCollector",
            dependencies: [
                "APITraceFormat",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "apitrace",
            dependencies: [
                "APITraceFormat",
                "APITraceCapture",
                "APITraceCollector",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "apitrace-bench",
            dependencies: [
                "APITraceFormat",
                "APITraceCapture",
                "APITraceUpload",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "trace-producer-fixture",
            dependencies: ["APITraceFormat"],
            path: "Tests/Fixtures/TraceProducer"
        ),
        .testTarget(
            name: "APITraceFormatTests",
            dependencies: ["APITraceFormat", "trace-producer-fixture"]
        ),
        .executableTarget(
            name: "trace-uploader-fixture",
            dependencies: ["APITraceFormat", "APITraceUpload"],
            path: "Tests/Fixtures/TraceUploader"
        ),
        .testTarget(
            name: "APITraceCollectionTests",
            dependencies: [
                "APITraceFormat",
                "APITraceUpload",
                "APITraceCollector",
                "trace-uploader-fixture",
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
