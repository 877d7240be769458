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
        .library(name: "APITraceAnalysis", targets: ["APITraceAnalysis"]),
        .executable(name: "apitrace", targets: ["apitrace"]),
        .executable(name: "apitrace-bench", targets: ["apitrace-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
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
            name: "APITraceAnalysis",
            dependencies: [
                "APITraceFormat",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        .executableTarget(
            name: "apitrace",
            dependencies: [
                "APITraceFormat",
                "APITraceCapture",
                "APITraceAnalysis",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "apitrace-bench",
            dependencies: [
                "APITraceFormat",
                "APITraceCapture",
                "APITraceAnalysis",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "APITraceFormatTests",
            dependencies: ["APITraceFormat"]
        ),
        .testTarget(
            name: "APITraceAnalysisTests",
            dependencies: ["APITraceAnalysis", "APITraceFormat"]
        ),
    ]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
