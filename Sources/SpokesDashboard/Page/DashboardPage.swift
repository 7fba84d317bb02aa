/// The live dashboard every node serves: one HTML page, its stylesheet and its script,
/// all compiled into the binary.
///
/// The server serves ``html`` at `/`, ``css`` at `/static/dashboard.css` and
/// ``javascript`` at `/static/dashboard.js`. The page holds no inline script or style, so
/// it runs under `default-src 'self'; img-src 'self' data:; style-src 'self';
/// script-src 'self'; connect-src 'self'`. The script fills it from `GET /api/snapshot`
/// at once, then follows `GET /api/events` (``DashboardSnapshot`` as server-sent events),
/// falling back to polling; it builds every element with DOM calls (`textContent`,
/// `setAttribute`), never from markup, so names from the cluster cannot inject anything.
///
/// Hooks for browser tests: member rows `tr[data-member][data-state]`, job cards
/// `[data-job][data-state]` (a running replicated job's replicas in `.job-replicas`, one
/// `[data-replica]` each: the leader's with class `leader`, one on a member not alive with
/// `down`), the task stream's SVG in `#task-stream` and the latest failovers under it in
/// `#failovers` (`li[data-group]`), the station map's
/// SVG in `#station-map` with one `circle.station` per station, and `#connection` whose
/// `data-state` is `live`, `reconnecting` or `polling`. Opening the page with
/// `?transport=poll` skips server-sent events and polls `/api/snapshot` every second.
public enum DashboardPage {
    /// The page at `/`.
    public static let html = #"""
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light">
        <title>Spokes dashboard</title>
        <link rel="icon" href="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Ccircle cx='8' cy='8' r='6' fill='none' stroke='%232563eb' stroke-width='2'/%3E%3Ccircle cx='8' cy='8' r='1.8' fill='%232563eb'/%3E%3C/svg%3E">
        <link rel="stylesheet" href="/static/dashboard.css">
        <script src="/static/dashboard.js" defer></script>
        </head>
        <body>
        <header class="topbar">
          <div class="brand">
            <svg class="logo" viewBox="0 0 24 24" width="24" height="24" aria-hidden="true"><circle cx="12" cy="12" r="9.5"/><path d="M12 2.5v19M2.5 12h19M5.3 5.3l13.4 13.4M18.7 5.3 5.3 18.7"/><circle class="hub" cx="12" cy="12" r="2.6"/></svg>
            <span>Spokes</span>
          </div>
          <dl class="where">
            <div><dt>cluster</dt><dd id="cluster-name">…</dd></div>
            <div><dt>served by</dt><dd id="serving-node">…</dd></div>
          </dl>
          <div id="connection" data-state="reconnecting" role="status" aria-live="polite"><span class="dot"></span><span id="connection-label">connecting</span></div>
        </header>
        <div id="notice" class="notice" role="alert" hidden></div>
        <main>
          <section id="overview" class="tiles" aria-label="Overview">
            <div class="tile"><span class="tile-name">Members alive</span><span class="tile-value" id="tile-members">–</span><span class="tile-detail" id="tile-members-detail"></span></div>
            <div class="tile"><span class="tile-name">CPU slots busy</span><span class="tile-value" id="tile-slots">–</span><span class="tile-detail"><span class="meter"><span class="meter-fill" id="tile-slots-meter"></span></span> <span id="tile-waiting"></span></span></div>
            <div class="tile"><span class="tile-name">Jobs running</span><span class="tile-value" id="tile-jobs">–</span><span class="tile-detail" id="tile-jobs-detail"></span></div>
            <div class="tile"><span class="tile-name">Tasks done</span><span class="tile-value" id="tile-done">–</span><span class="tile-detail" id="tile-done-detail"></span></div>
            <div class="tile"><span class="tile-name">Throughput</span><span class="tile-value" id="tile-rate">–</span><span class="tile-detail" id="tile-rate-detail"></span></div>
          </section>
          <section id="stream-panel" class="panel">
            <div class="panel-head">
              <h2>Task stream</h2>
              <span class="hint">last 60 s · a row per slot · a bar per attempt</span>
              <div id="stream-legend" class="legend"></div>
            </div>
            <div id="task-stream" class="stream"></div>
            <ul id="failovers" class="failovers" aria-label="Leader changes of job groups" hidden></ul>
            <div id="stream-tip" class="tip" hidden></div>
          </section>
          <div class="columns">
            <section id="jobs-panel" class="panel">
              <div class="panel-head"><h2>Jobs</h2><span class="hint" id="jobs-hint"></span></div>
              <div id="jobs" class="jobs"></div>
              <p id="jobs-empty" class="empty">No jobs yet. Submit one with <code>spokes submit</code>.</p>
            </section>
            <section id="map-panel" class="panel">
              <div class="panel-head">
                <h2>Stations</h2>
                <label class="picker" hidden><span>job</span> <select id="map-job"></select></label>
              </div>
              <p id="map-caption" class="caption"></p>
              <div id="station-map" class="map"><p class="empty">The map shows the stations of a bike job once one runs.</p></div>
              <div id="map-legend" class="legend"></div>
            </section>
          </div>
          <section id="members-panel" class="panel">
            <div class="panel-head"><h2>Members</h2><span class="hint" id="members-hint"></span></div>
            <div class="table-wrap">
              <table id="members">
                <thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Address</th><th scope="col" title="cpu tasks: they compute">CPU slots in use</th><th scope="col" title="waiting tasks: they mostly sleep or await calls">Waiting slots in use</th><th scope="col" class="num">Tasks done</th><th scope="col" class="num">Failures</th><th scope="col" class="num">Heartbeat RTT</th><th scope="col" class="num">Uptime</th><th scope="col" title="the task kinds it runs, with their versions">Kinds</th></tr></thead>
                <tbody></tbody>
              </table>
            </div>
          </section>
        </main>
        <footer class="footer">Spokes · times are on the serving node's clock · <a href="/api/snapshot">snapshot JSON</a></footer>
        </body>
        </html>

        """#
}
