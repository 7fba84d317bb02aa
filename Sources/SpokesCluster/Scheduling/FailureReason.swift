import SpokesConcurrency

/// Why a task attempt failed, as a sentence for a report: never a type dump such as
/// `CancellationError()`.
///
/// ``JobRunner`` keeps one reason per failed attempt; reports print them after
/// "attempt N on NODE: ", so a reason names what happened, not where.
public enum FailureReason {
    /// The reason for `error`, thrown by an attempt that had `deadline` seconds.
    public static func describe(_ error: any Error, deadline: Double) -> String {
        switch error {
        case is TimeoutError:
            return "no result within the \(seconds(deadline)) deadline"
        case is CancellationError:
            return "cancelled"
        case RemoteCallError.remoteError(let type, let message, let node):
            // The worker's own error travels as its type and description.
            if type == "CancellationError" { return "cancelled on \(node)" }
            return readable(message) ? message : "\(node) failed with \(type)"
        case let error as any CustomStringConvertible where readable(error.description):
            return error.description
        default:
            return "failed with \(String(describing: type(of: error)))"
        }
    }

    /// False for a description that is a Swift value dump, e.g. `CancellationError()` or
    /// `DecodingError.dataCorrupted(...)`, rather than words.
    public static func readable(_ text: String) -> Bool {
        guard let first = text.first, !text.isEmpty else { return false }
        let dump = first.isUppercase && text.hasSuffix(")")
            && text.prefix { $0 != "(" }.allSatisfy { $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" }
        return !dump
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e9 ? "\(Int(value)) s" : "\(value) s"
    }
}
