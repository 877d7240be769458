/// The collector's own success answer, told apart from any other 2xx on the way (a captive
/// portal's login page, a proxy's `204`).
///
/// The collector names every stored file after the SHA-256 of the bytes it received and answers
/// `201 stored <dt=…/name>` or `200 already stored <dt=…/name>`. Only an answer of that form whose
/// name ends with the first 16 hex digits of the SHA-256 of the bytes sent counts as delivered:
/// something that never saw the file cannot write that name.
struct CollectorReceipt: Equatable {
    /// Where the collector stored the file, relative to its folder.
    var storedPath: String
    /// False when the collector already had the file.
    var isNew: Bool

    /// The receipt in `body`, if `status` and `body` are the collector's answer for content with this SHA-256.
    init?(status: Int, body: String, sha256Hex: String) {
        let firstLine = body.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let path: Substring
        switch status {
        case 201 where firstLine.hasPrefix("stored "):
            path = firstLine.dropFirst("stored ".count)
            isNew = true
        case 200 where firstLine.hasPrefix("already stored "):
            path = firstLine.dropFirst("already stored ".count)
            isNew = false
        default:
            return nil
        }
        let name = path.prefix { $0 != " " }
        guard name.hasPrefix("dt="), name.hasSuffix("-\(sha256Hex.prefix(16)).jsonl.gz") else { return nil }
        storedPath = String(name)
    }
}
