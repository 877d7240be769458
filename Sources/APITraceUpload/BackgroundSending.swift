#if canImport(UIKit) && !os(watchOS)
import Foundation
import UIKit

/// Finishes the writer's current file and sends what is pending when the app goes to the
/// background, inside a UIKit background task, so a session's last minute is not left on the
/// device until the next launch.
///
/// Unverified: apitrace is built and tested on Linux only, where UIKit does not exist; this file is
/// compiled by Apple-platform builds alone. The background task ends when the pass ends (all
/// delivered, or a failure whose backoff leaves the files on disk for the next launch) or when the
/// system's expiration handler runs, whichever comes first.
final class BackgroundSending: @unchecked Sendable {
    private let observer: any NSObjectProtocol

    init(_ uploader: TraceUploader) {
        observer = NotificationCenter.default.addObserver(
            forName: UIApplication.didEnterBackgroundNotification, object: nil, queue: .main
        ) { [weak uploader] _ in
            guard let uploader else { return }
            MainActor.assumeIsolated { BackgroundTask.run(uploader) }
        }
    }

    deinit {
        NotificationCenter.default.removeObserver(observer)
    }
}

/// One background task around one ``TraceUploader/finishAndSend()``, ended exactly once.
@MainActor
private final class BackgroundTask {
    private var identifier = UIBackgroundTaskIdentifier.invalid

    static func run(_ uploader: TraceUploader) {
        let task = BackgroundTask()
        task.identifier = UIApplication.shared.beginBackgroundTask(withName: "apitrace upload") { task.end() }
        guard task.identifier != .invalid else { return }
        Task { @MainActor in
            await uploader.finishAndSend()
            task.end()
        }
    }

    private func end() {
        guard identifier != .invalid else { return }
        UIApplication.shared.endBackgroundTask(identifier)
        identifier = .invalid
    }
}
#endif
