import APITraceFormat

/// An array that decodes every element it can, skips the others and records each skipped one
/// as a `decode_failure` (entity: the element type, path: the element's full path).
///
/// ```swift
/// struct AppsPage: Decodable {
///     @LossyArray var apps: [App]
/// }
/// ```
///
/// Inside ``TracedJSONDecoder`` failures go to its tracer with its route; elsewhere to ``APITracer/shared``.
@propertyWrapper
public struct LossyArray<Element: Decodable>: Decodable {
    /// The elements that decoded.
    public var wrappedValue: [Element]

    /// Wraps an array.
    public init(wrappedValue: [Element]) {
        self.wrappedValue = wrappedValue
    }

    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var elements: [Element] = []
        if let count = container.count { elements.reserveCapacity(count) }
        let context = DecodeContext.current
        while !container.isAtEnd {
            let index = container.currentIndex
            do {
                elements.append(try container.decode(Element.self))
            } catch let error as DecodingError {
                // The model-type probe decodes a second time: its failures were recorded the first.
                if decoder.userInfo[DecodedTypes.key] != nil {
                    if container.currentIndex == index { _ = try? container.decode(Skipped.self) }
                    if container.currentIndex == index { break }
                    continue
                }
                let tracer = context?.tracer ?? APITracer.shared
                tracer.recordDecodeFailure(TraceEvent.DecodeFailure(error, entity: String(describing: Element.self), route: context?.route))
                if container.currentIndex == index { _ = try? container.decode(Skipped.self) }
            }
            // A container that cannot move past a bad element would loop forever.
            if container.currentIndex == index { break }
        }
        self.wrappedValue = elements
    }
}

extension LossyArray: Sendable where Element: Sendable {}
extension LossyArray: LossyArrayMarker {}
extension LossyArray: Equatable where Element: Equatable {}

extension LossyArray: Encodable where Element: Encodable {
    public func encode(to encoder: any Encoder) throws {
        try wrappedValue.encode(to: encoder)
    }
}

/// Decodes from anything, to step over a bad element.
private struct Skipped: Decodable {
    init(from decoder: any Decoder) throws {}
}
