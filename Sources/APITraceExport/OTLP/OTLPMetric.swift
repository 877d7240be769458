/// One metric as OTLP carries it (`opentelemetry.proto.metrics.v1.Metric`): a cumulative sum or a
/// cumulative explicit-bucket histogram.
public struct OTLPMetric: Sendable, Equatable {
    /// One point of a sum (`NumberDataPoint`, `as_double`).
    public struct NumberPoint: Sendable, Equatable {
        public var attributes: [OTLPAttribute]
        public var value: Double
    }

    /// One point of a histogram (`HistogramDataPoint`).
    public struct HistogramPoint: Sendable, Equatable {
        public var attributes: [OTLPAttribute]
        public var count: UInt64
        public var sum: Double
        /// One more than `bounds`: the last is above the last bound.
        public var bucketCounts: [UInt64]
        public var bounds: [Double]
    }

    /// What the metric holds.
    public enum Data: Sendable, Equatable {
        case sum([NumberPoint], monotonic: Bool)
        case histogram([HistogramPoint])
    }

    public var name: String
    public var description: String
    public var unit: String
    public var data: Data
}
