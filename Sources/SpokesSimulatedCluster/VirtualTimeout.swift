/// A condition that did not come true within its bound of virtual time (or, with
/// `broke`, stopped holding): what ``SimulatedCluster``'s waits throw, naming it.
public struct VirtualTimeout: Error, CustomStringConvertible {
    public var what: String
    /// Virtual seconds waited.
    public var seconds: Double
    /// True when the condition was true and stopped holding (``SimulatedCluster/holds(_:for:step:_:)``).
    public var broke = false

    public init(what: String, seconds: Double, broke: Bool = false) {
        self.what = what
        self.seconds = seconds
        self.broke = broke
    }

    public var description: String {
        broke ? "stopped holding within \(seconds) virtual s: \(what)" : "not within \(seconds) virtual s: \(what)"
    }
}
