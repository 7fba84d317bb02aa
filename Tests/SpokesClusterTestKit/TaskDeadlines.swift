/// Deadlines of jobs in tests that are not about deadlines.
public enum TaskDeadlines {
    /// An attempt's deadline no test run reaches, in virtual or real seconds: a test about
    /// something else never sees an attempt time out.
    public static let unreached = 3_600.0
}
