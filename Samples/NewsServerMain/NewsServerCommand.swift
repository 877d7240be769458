import ArgumentParser
import Hummingbird
import OtecNewsServer

/// `otec-news-server`: runs the sample API with injected faults.
@main
struct NewsServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "otec-news-server",
        abstract: "A sample news API (REST, Server-Sent Events, live comments over a WebSocket) that injects faults for apitrace to find."
    )

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on (0: any free port).") var port = 8080
    @Option(help: "Share of REST responses answered with 5xx (0...1).") var errorRate = 0.0
    @Option(help: "Share of REST responses delayed (0...1).") var slowRate = 0.0
    @Option(help: "Delay of a slow response, in milliseconds.") var slowMs = 600
    @Option(help: "Share of apps returned without their `stability` key (0...1).") var missingStability = 0.0
    @Option(help: "Cut each SSE connection after this many events.") var sseDropAfter: Int?
    @Option(help: "Let each SSE connection go silent after this many events.") var sseSilenceAfter: Int?
    @Option(help: "Start of an error spike, in seconds after start.") var spikeAt: Int?
    @Option(help: "Length of the error spike, in seconds.") var spikeFor = 60
    @Option(help: "Share of 5xx during the spike (0...1).") var spikeErrorRate = 0.6
    @Option(help: "Port of the live comments WebSocket, ws://HOST:PORT/news/{id}/comments (0: any free port).") var commentsPort = 8081
    @Option(help: "Drop every third comments connection without a close frame after this many comments.") var commentsDropAfter: Int?
    @Option(help: "Close every third comments connection with 1011 after this many comments.") var commentsErrorAfter: Int?
    @Option(help: "Answer pings on the comments WebSocket this many milliseconds late.") var commentsPongDelayMs: Int?

    func validate() throws {
        for (name, value) in [("--error-rate", errorRate), ("--slow-rate", slowRate), ("--missing-stability", missingStability), ("--spike-error-rate", spikeErrorRate)] {
            guard (0...1).contains(value) else { throw ValidationError("\(name) must be between 0 and 1, got \(value)") }
        }
    }

    func run() async throws {
        let faults = NewsServerFaults(
            serverErrorRate: errorRate, slowRate: slowRate, slowDelay: .milliseconds(slowMs),
            missingStabilityRate: missingStability, sseDropAfter: sseDropAfter, sseSilenceAfter: sseSilenceAfter,
            spike: spikeAt.map { .seconds($0) ..< .seconds($0 + spikeFor) }, spikeErrorRate: spikeErrorRate,
            commentsDropAfter: commentsDropAfter, commentsErrorAfter: commentsErrorAfter,
            commentsPongDelay: commentsPongDelayMs.map { .milliseconds($0) })
        let comments = try await NewsCommentsServer(faults: faults).start(host: host, port: commentsPort)
        print("otec-news-server live comments on ws://\(host):\(comments.port)/news/{id}/comments")
        let app = NewsServer(faults: faults).application(host: host, port: port) { port in
            print("otec-news-server listening on http://\(host):\(port)")
        }
        try await app.runService()
    }
}
