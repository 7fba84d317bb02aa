extension CallTargetRenames {
    /// The functions protocol 5 renamed: none yet.
    public static let current = CallTargetRenames(since: 5, renames: [])
}
