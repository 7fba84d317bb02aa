extension DashboardPage {
    /// The page's stylesheet, served at `/static/dashboard.css`. Light; the state colours
    /// (green alive or finished, amber suspect, red dead or failed, blue running) are the
    /// same in every badge.
    ///
    /// The text is `Page/Assets/dashboard.css`, embedded by `Scripts/embed-resources` as
    /// ``styleAsset``.
    public static let css = styleAsset
}
