import FoundationEssentials

/// Whether bytes are one JSON text (a fragment such as `3` or `"a"` too): what a task's
/// input, a job's spec and its reports must be before they are sent or stored.
///
/// With `JSONDecoder` (`FoundationEssentials`), not `JSONSerialization` (Foundation,
/// whose linking links CoreFoundation and ICU into every process: BENCHMARKS.md, "Where
/// an idle node's memory goes"). Every value is visited, so nothing invalid passes
/// unread. Check the shape first (``JSONShapeLimits``): this recurses once per level.
public enum JSONText {
    /// Whether `bytes` are a JSON text.
    public static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        (try? JSONDecoder().decode(AnyValue.self, from: Data(bytes))) != nil
    }

    /// Any JSON value, decoded to be checked and then dropped.
    private struct AnyValue: Decodable {
        private struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            if let object = try? decoder.container(keyedBy: Key.self) {
                for key in object.allKeys { _ = try object.decode(AnyValue.self, forKey: key) }
            } else if var array = try? decoder.unkeyedContainer() {
                while !array.isAtEnd { _ = try array.decode(AnyValue.self) }
            } else {
                let value = try decoder.singleValueContainer()
                guard !value.decodeNil(), (try? value.decode(Bool.self)) == nil, (try? value.decode(Double.self)) == nil else { return }
                _ = try value.decode(String.self)
            }
        }
    }
}
