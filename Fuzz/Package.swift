// swift-tools-version: 5.4
import PackageDescription

// libFuzzer targets for the reading side, kept out of the main package so that `swift build` and
// `swift test` never see them. Build and run them with `Scripts/fuzz.sh`, which passes
// `-sanitize=fuzzer,address` to every Swift module so the library code is instrumented too.
// Each target defines `LLVMFuzzerTestOneInput` and no `main`: libFuzzer supplies it.
// Tools version 5.4 on purpose: from 5.5 on SwiftPM renames an executable's entry point to
// `<module>_main` and links with `--defsym main=<module>_main`, a symbol that `-parse-as-library`
// never emits, so the link fails; 5.4 leaves `main` to libFuzzer.
let package = Package(
    name: "apitrace-fuzz",
    dependencies: [
        .package(name: "apitrace", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "fuzz-trace-line",
            dependencies: [
                .product(name: "APITraceFormat", package: "apitrace"),
                .product(name: "APITraceAnalysis", package: "apitrace"),
            ],
            path: "Sources/TraceLine"
        ),
        .executableTarget(
            name: "fuzz-line-decoder",
            dependencies: [.product(name: "APITraceFormat", package: "apitrace")],
            path: "Sources/LineDecoder"
        ),
        .executableTarget(
            name: "fuzz-file-reader",
            dependencies: [.product(name: "APITraceFormat", package: "apitrace")],
            path: "Sources/FileReader"
        ),
        .executableTarget(
            name: "fuzz-timestamp",
            dependencies: [.product(name: "APITraceFormat", package: "apitrace")],
            path: "Sources/Timestamp"
        ),
        .executableTarget(
            name: "fuzz-sse-parser",
            dependencies: [.product(name: "APITraceSSE", package: "apitrace")],
            path: "Sources/SSEParser"
        ),
        .executableTarget(
            name: "fuzz-sse-connection",
            dependencies: [.product(name: "APITraceSSE", package: "apitrace")],
            path: "Sources/SSEConnection"
        ),
        .executableTarget(
            name: "fuzz-alert-rules",
            dependencies: [.product(name: "APITraceAlerting", package: "apitrace")],
            path: "Sources/AlertRules"
        ),
    ]
)

for target in package.targets {
    // No `main` in these modules: libFuzzer's runtime provides it.
    target.swiftSettings = [.unsafeFlags(["-parse-as-library"])]
}
