extension Task where Failure == Never {
    /// A task that prefers `executor` (`Task(executorPreference:)`), or an ordinary task
    /// where there is none.
    ///
    /// Why not `Task(executorPreference: nil)`: the runtime (Swift 6.3) still records a
    /// preference for such a task, an empty one, and every hop of the task (each
    /// `swift_task_switch`, each enqueue) then reads its preference under the task's
    /// status lock. Measured in the simulator, where no node has a protocol thread: those
    /// reads were 2% of its instructions.
    @discardableResult
    public static func preferring(_ executor: (any TaskExecutor)?, operation: sending @escaping () async -> Success) -> Task<Success, Never> {
        if let executor { return Task(executorPreference: executor, operation: operation) }
        return Task(operation: operation)
    }
}
