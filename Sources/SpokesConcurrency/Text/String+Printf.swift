import Glibc

extension String {
    /// `printf`-style text from the C library's `vsnprintf`: `%d`, `%.2f`, `%9.3f`, `%g`,
    /// `%02X`, `%%` and the like, with Swift numbers as arguments (`%ld` or `%d` for `Int`).
    ///
    /// Why not Foundation's `String(format:)`: it is Foundation's, not
    /// `FoundationEssentials`', and linking it links CoreFoundation and ICU into every
    /// process (BENCHMARKS.md, "Where an idle node's memory goes"). For these conversions
    /// both give the same text: Foundation hands numbers to the C library too, and a
    /// process that never calls `setlocale` formats in the "C" locale (a `.` before the
    /// decimals). There is no `%@`: pass `String`s by interpolating them into `format`.
    public init(printf format: String, _ arguments: any CVarArg...) {
        var buffer = [CChar](repeating: 0, count: 128)
        let needed = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        if needed >= buffer.count {
            buffer = [CChar](repeating: 0, count: Int(needed) + 1)
            _ = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        }
        self = needed < 0 ? format : String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
