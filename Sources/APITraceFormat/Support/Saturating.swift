extension FixedWidthInteger {
    /// `self + other`, held at the type's bounds instead of trapping: counts taken from files are
    /// added with this, so a hostile `suppressed` or `count` cannot crash a reader.
    @inline(__always)
    package func addingSaturated(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }
}
