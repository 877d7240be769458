@testable import APITraceAlerting
import Testing

/// The command notifier's delivery, below the CLI.
@Suite struct CommandDeliveryTests {
    /// Below the CLI: a megabyte of input to a child that closes its stdin at once, so the writes
    /// really meet a closed pipe (EPIPE) after filling its buffer. The delivery polls on the
    /// cooperative pool, which a full parallel test run keeps busy: its timeout is generous.
    @Test func writingIntoAClosedPipeGivesAnErrorNotASignal() async {
        let input = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        let ending = await CommandDelivery.run("exec 0<&-; sleep 0.3; exit 0", input: input, environment: ["PATH": "/usr/bin:/bin"], timeout: .seconds(60))
        #expect(ending.ending == .exited(0))
        let reading = await CommandDelivery.run("head -c 10 >/dev/null; exit 0", input: input, environment: ["PATH": "/usr/bin:/bin"], timeout: .seconds(60))
        #expect(reading.ending == .exited(0))
        let all = await CommandDelivery.run(#"test "$(wc -c)" -eq 1048576"#, input: input, environment: ["PATH": "/usr/bin:/bin"], timeout: .seconds(60))
        #expect(all.ending == .exited(0))
    }
}
