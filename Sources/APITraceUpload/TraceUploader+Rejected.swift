import Foundation

extension TraceUploader {
    /// Moves a refused file to the rejected folder, with a `.reason` file beside it, and logs why.
    func setAside(_ path: String, status: Int, reason: String) {
        let name = Self.name(path)
        let dir = configuration.directory.hasSuffix("/") ? configuration.directory : configuration.directory + "/"
        let folder = dir + configuration.rejectedFolder
        mkdir(folder, 0o700)
        let target = folder + "/" + name
        if rename(path, target) != 0 {
            configuration.diagnostics("cannot move refused \(path) to \(folder): \(String(cString: strerror(errno))); deleting it")
            unlink(path)
        } else {
            let text = "HTTP \(status): \(reason)\n"
            _ = FileManager.default.createFile(atPath: target + ".reason", contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        }
        configuration.diagnostics("the collector refused \(name) (HTTP \(status): \(reason)); moved it to \(folder)/")
        lockedUpdate { $0.rejected += 1 }
        configuration.onEvent(.rejected(file: name, status: status, reason: reason))
        enforceRejectedBudget(folder)
    }

    /// Deletes the oldest refused files past the rejected folder's budgets.
    private func enforceRejectedBudget(_ folder: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        var files: [(path: String, size: Int)] = names.filter { $0.hasSuffix(".jsonl.gz") }.sorted().map { name in
            var info = stat()
            let path = folder + "/" + name
            return (path, stat(path, &info) == 0 ? Int(info.st_size) : 0)
        }
        var total = files.reduce(0) { $0 + $1.size }
        while !files.isEmpty && (files.count > configuration.rejectedFileBudget || total > configuration.rejectedByteBudget) {
            let oldest = files.removeFirst()
            unlink(oldest.path)
            unlink(oldest.path + ".reason")
            total -= oldest.size
        }
    }
}
