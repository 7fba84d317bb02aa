import FoundationEssentials

extension DashboardPage {
    /// The page's script, served at `/static/dashboard.js`: connection (one fetch, then
    /// server-sent events, polling as a fallback), and the members table, job cards, task
    /// stream and station map, updated in place at each snapshot.
    ///
    /// The task stream draws one SVG path per colour, so thousands of bars cost a handful
    /// of elements; between snapshots a `requestAnimationFrame` loop slides them by the
    /// time elapsed on the serving node's clock. The palettes, the map projection and the
    /// station radius are the report's (``FillColorScale``, ``NodePalette``,
    /// ``MapProjection``, ``StationMapSVG``), written in from Swift where they are numbers.
    ///
    /// The text is `Page/Assets/dashboard.js` (embedded by `Scripts/embed-resources` as
    /// ``scriptAsset``) with each of ``sharedConstants`` written over its placeholder.
    public static let javascript = sharedConstants.reduce(scriptAsset) { script, constant in
        script.replacing(constant.placeholder, with: constant.value)
    }

    /// The values the script takes from Swift. Each placeholder appears once in
    /// `dashboard.js`, as an identifier or inside a string literal, so the file on its own
    /// is valid JavaScript (`node --check`); none is left in ``javascript``.
    static let sharedConstants: [(placeholder: String, value: String)] = [
        ("__FILL_STOPS__", FillColorScale.javascriptStops),
        ("__NO_DOCKS_COLOR__", FillColorScale.noDocks.hex),
        ("__NODE_COLORS__", NodePalette.javascriptArray),
        ("__TIMELINE_SECONDS__", "\(DashboardSnapshot.timelineSeconds)"),
        ("__MIN_LONGITUDE_SCALE__", "\(MapProjection.minimumLongitudeScale)"),
    ]
}
