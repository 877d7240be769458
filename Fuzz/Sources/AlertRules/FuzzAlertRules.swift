@_spi(Fuzzing) import APITraceAlerting

/// libFuzzer entry point: the input is the text of a rules file (YAML or JSON).
///
/// Parsing either gives rules or throws an `AlertConfigError`; it never traps or hangs.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAlertRules(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    try? AlertingFuzzingSupport.parseRules(text, file: "fuzz.yaml")
    return 0
}
