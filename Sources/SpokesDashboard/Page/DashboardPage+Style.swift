extension DashboardPage {
    /// The page's stylesheet, served at `/static/dashboard.css`. Light; the state colours
    /// (green alive or finished, amber suspect, red dead or failed, blue running) are the
    /// same in every badge.
    public static let css = #"""
        :root {
          --ink: #1f2937; --muted: #6b7280; --faint: #9ca3af; --line: #e5e7eb; --panel: #ffffff; --ground: #f3f5f8;
          --accent: #2563eb; --ok: #15803d; --ok-bg: #dcfce7; --warn: #b45309; --warn-bg: #fef3c7;
          --bad: #dc2626; --bad-bg: #fee2e2; --info: #1d4ed8; --info-bg: #dbeafe; --idle: #4b5563; --idle-bg: #e5e7eb;
          --top: #0f172a;
        }
        * { box-sizing: border-box; }
        html { -webkit-text-size-adjust: 100%; }
        body {
          margin: 0; background: var(--ground); color: var(--ink);
          font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
          font-variant-numeric: tabular-nums;
        }
        code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
        a { color: var(--accent); }
        [hidden] { display: none !important; }

        /* Top bar */
        .topbar {
          position: sticky; top: 0; z-index: 10; display: flex; align-items: center; gap: 28px;
          padding: 10px 24px; background: var(--top); color: #e2e8f0; box-shadow: 0 1px 0 rgba(0, 0, 0, .25);
        }
        .brand { display: flex; align-items: center; gap: 9px; font-weight: 700; font-size: 18px; color: #fff; letter-spacing: .01em; }
        .logo { fill: none; stroke: #60a5fa; stroke-width: 1.6; }
        .logo .hub { fill: #60a5fa; stroke: none; }
        .where { display: flex; gap: 22px; margin: 0; min-width: 0; flex: 1; }
        .where div { display: flex; align-items: baseline; gap: 7px; min-width: 0; }
        .where dt { color: #94a3b8; font-size: 12px; text-transform: uppercase; letter-spacing: .06em; }
        .where dd { margin: 0; font-weight: 600; color: #fff; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
        #connection {
          display: inline-flex; align-items: center; gap: 8px; padding: 4px 12px; border-radius: 999px;
          font-size: 13px; font-weight: 600; background: rgba(255, 255, 255, .08); color: #e2e8f0; white-space: nowrap;
        }
        #connection .dot { width: 9px; height: 9px; border-radius: 50%; background: var(--faint); }
        #connection[data-state="live"] { color: #bbf7d0; }
        #connection[data-state="live"] .dot { background: #22c55e; box-shadow: 0 0 0 0 rgba(34, 197, 94, .7); animation: pulse 2s infinite; }
        #connection[data-state="reconnecting"] { color: #fde68a; }
        #connection[data-state="reconnecting"] .dot { background: #f59e0b; animation: blink 1s infinite; }
        #connection[data-state="polling"] { color: #bfdbfe; }
        #connection[data-state="polling"] .dot { background: #60a5fa; }
        @keyframes pulse { 0% { box-shadow: 0 0 0 0 rgba(34, 197, 94, .6); } 70% { box-shadow: 0 0 0 7px rgba(34, 197, 94, 0); } 100% { box-shadow: 0 0 0 0 rgba(34, 197, 94, 0); } }
        @keyframes blink { 50% { opacity: .35; } }

        .notice {
          margin: 16px 24px 0; padding: 14px 18px; border-radius: 10px; border: 1px solid #fecaca; border-left: 6px solid var(--bad);
          background: #fef2f2; color: #7f1d1d; font-size: 15px;
        }
        .notice code { background: #fff; border-radius: 4px; padding: 1px 5px; }

        main { padding: 16px 24px 8px; max-width: 1680px; margin: 0 auto; }

        /* Overview tiles */
        .tiles { display: grid; grid-template-columns: repeat(5, minmax(0, 1fr)); gap: 12px; margin-bottom: 14px; }
        .tile { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 10px 14px; min-width: 0; }
        .tile-name { display: block; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .05em; font-weight: 600; }
        .tile-value { display: block; font-size: 24px; font-weight: 700; line-height: 1.25; }
        .tile-detail { display: block; color: var(--muted); font-size: 12.5px; min-height: 18px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
        .tile .meter { margin-top: 6px; width: 100%; }

        /* Panels */
        .panel { position: relative; background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 12px 16px 14px; margin-bottom: 14px; min-width: 0; }
        .panel-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 12px; margin-bottom: 8px; }
        .panel-head h2 { margin: 0; font-size: 16px; }
        .hint { color: var(--muted); font-size: 12.5px; }
        .columns { display: grid; grid-template-columns: minmax(0, 7fr) minmax(0, 5fr); gap: 14px; align-items: start; }
        .columns .panel { margin-bottom: 14px; }
        .empty { color: var(--muted); margin: 8px 0; }

        /* Legends and swatches */
        .legend { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 12px; color: var(--muted); font-size: 12.5px; }
        .panel-head .legend { margin-left: auto; }
        .legend .key { display: inline-flex; align-items: center; gap: 5px; white-space: nowrap; }
        .legend svg { display: block; }
        .legend-title { font-weight: 600; color: var(--ink); }
        .legend-note { color: var(--muted); }
        .swatch { display: inline-block; width: 11px; height: 11px; border-radius: 3px; background: var(--faint); flex: none; }
        .key-retry .swatch { background: repeating-linear-gradient(45deg, #64748b 0 2px, #cbd5e1 2px 4px); }
        .swatch-dot { stroke: #334155; stroke-opacity: .55; stroke-width: .8; }

        /* Badges */
        .badge { display: inline-block; padding: 1px 9px; border-radius: 999px; font-size: 12px; font-weight: 650; background: var(--idle-bg); color: var(--idle); text-transform: lowercase; white-space: nowrap; }
        .badge-alive, .badge-finished { background: var(--ok-bg); color: var(--ok); }
        .badge-suspect { background: var(--warn-bg); color: var(--warn); }
        .badge-dead, .badge-failed { background: var(--bad-bg); color: #b91c1c; }
        .badge-joining, .badge-running { background: var(--info-bg); color: var(--info); }
        .badge-left, .badge-cancelled, .badge-other { background: var(--idle-bg); color: var(--idle); }

        /* Meters */
        .meter { display: inline-block; vertical-align: middle; width: 70px; height: 6px; border-radius: 3px; background: #eceff3; overflow: hidden; }
        .meter-fill { display: block; height: 100%; width: 0; background: var(--accent); border-radius: 3px; transition: width .4s ease; }

        /* Members */
        .table-wrap { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; }
        th { text-align: left; color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; padding: 6px 12px 6px 0; border-bottom: 1px solid var(--line); white-space: nowrap; }
        td { padding: 7px 12px 7px 0; border-bottom: 1px solid #f0f2f5; white-space: nowrap; }
        tbody tr:last-child td { border-bottom: 0; }
        th.num, td.num { text-align: right; }
        td.name { display: flex; align-items: center; gap: 8px; font-weight: 600; }
        .member-name { overflow: hidden; text-overflow: ellipsis; max-width: 260px; }
        .tag { font-size: 11px; font-weight: 600; color: var(--accent); background: #eff6ff; border: 1px solid #bfdbfe; border-radius: 4px; padding: 0 5px; }
        tr.serving td { background: #f8fbff; }
        tr[data-state="dead"] td, tr[data-state="left"] td { color: var(--faint); }
        td.slots { display: flex; align-items: center; gap: 10px; }
        .slots-text { min-width: 48px; }
        td.address code { color: #374151; }
        td.bad, dd.bad { color: var(--bad); font-weight: 600; }
        dd.warn { color: var(--warn); font-weight: 600; }

        /* Jobs */
        .jobs { display: flex; flex-direction: column; gap: 10px; max-height: 640px; overflow-y: auto; }
        .job { border: 1px solid var(--line); border-radius: 9px; padding: 10px 12px; background: #fff; transition: border-color .2s, box-shadow .2s; }
        .job.bike { cursor: pointer; }
        .job.bike:hover { border-color: #cbd5e1; }
        .job.on-map { border-color: #93c5fd; box-shadow: 0 0 0 2px #dbeafe; }
        .job[data-state="failed"] { border-left: 4px solid var(--bad); }
        .job-head { display: flex; align-items: center; gap: 8px; }
        .job-head .swatch { width: 12px; height: 12px; }
        .job-title { margin: 0; font-size: 14.5px; font-weight: 650; flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
        .job-meta { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 12px; color: var(--muted); font-size: 12.5px; margin: 3px 0 8px; }
        .job-meta code { color: #374151; }
        .report-link { font-weight: 600; text-decoration: none; }
        .report-link::after { content: " \2197"; }
        .map-link { font: inherit; font-size: 12.5px; color: var(--accent); background: none; border: 0; padding: 0; cursor: pointer; }
        .map-link:hover, .report-link:hover { text-decoration: underline; }
        .progress-line { display: flex; justify-content: space-between; gap: 8px; font-size: 12.5px; margin-bottom: 3px; }
        .progress-text { font-weight: 600; }
        .progress-percent { font-weight: 700; }
        .progress { display: flex; height: 10px; border-radius: 5px; background: #eef1f5; overflow: hidden; }
        .progress-done { display: block; height: 100%; background: var(--accent); transition: width .4s ease; }
        .progress-failed { display: block; height: 100%; background: var(--bad); transition: width .4s ease; }
        .stats { display: grid; grid-template-columns: repeat(5, minmax(0, 1fr)); gap: 6px; margin: 8px 0 6px; }
        .stat dt { color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .05em; }
        .stat dd { margin: 0; font-weight: 600; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
        .split-bar { display: flex; height: 6px; border-radius: 4px; background: #eef1f5; overflow: hidden; }
        .split-done { display: block; height: 100%; transition: width .4s ease; }
        .split-running { display: block; height: 100%; opacity: .4; transition: width .4s ease; }
        .split-legend { list-style: none; margin: 6px 0 0; padding: 0; display: flex; flex-wrap: wrap; gap: 2px 14px; font-size: 12.5px; color: var(--muted); }
        .split-legend li { display: inline-flex; align-items: center; gap: 5px; }
        .split-name { color: var(--ink); font-weight: 600; }

        /* Task stream */
        .stream { width: 100%; min-height: 60px; overflow: hidden; }
        .stream-svg { display: block; }
        .stream-svg text { font-size: 11px; fill: #4b5563; }
        .stream-svg .node-label { font-size: 12px; font-weight: 650; fill: var(--ink); }
        .stream-svg .slot-label { font-size: 10px; fill: var(--faint); }
        .stream-svg .row-band { fill: #f7f8fa; }
        .stream-svg .node-rule { stroke: #e5e7eb; }
        .stream-svg .grid-line { stroke: #eceff3; }
        .stream-svg .now-line { stroke: #94a3b8; stroke-dasharray: 2 2; }
        .stream-svg .axis-line { stroke: #cbd5e1; }
        .stream-svg .retry { stroke: #111827; stroke-width: .8; stroke-opacity: .8; }
        .stream-svg .empty-label { fill: var(--muted); font-size: 13px; }
        .tip {
          position: absolute; z-index: 5; pointer-events: none; min-width: 180px; max-width: 320px; padding: 7px 10px; border-radius: 7px;
          background: rgba(15, 23, 42, .94); color: #e2e8f0; font-size: 12px; line-height: 1.45; box-shadow: 0 4px 14px rgba(0, 0, 0, .2);
        }
        .tip-title { font-weight: 650; color: #fff; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }

        /* Station map */
        .picker { margin-left: auto; color: var(--muted); font-size: 12.5px; }
        .picker select { font: inherit; font-size: 12.5px; max-width: 260px; }
        .caption { margin: 0 0 8px; color: var(--muted); font-size: 12.5px; min-height: 18px; }
        .map { width: 100%; overflow: hidden; }
        .map-svg { display: block; max-width: 100%; height: auto; }
        .map-svg .map-ground { fill: #eef2f6; stroke: #dde3ea; }
        .map-svg .station { stroke: #334155; stroke-opacity: .55; stroke-width: .6; transition: fill .35s ease; }
        .map-svg .station.empty, .map-svg .station.full { stroke-opacity: .9; stroke-width: .9; }
        .map-svg .station:hover { stroke: #0f172a; stroke-opacity: 1; stroke-width: 2; }
        .map-svg .scale-bar path { fill: none; stroke: #475569; stroke-width: 1.2; }
        .map-svg .scale-bar text { fill: #475569; font-size: 10px; }
        #map-legend { margin-top: 8px; }

        .footer { color: var(--muted); font-size: 12px; text-align: center; padding: 4px 0 18px; }

        @media (max-width: 1100px) {
          .columns { grid-template-columns: minmax(0, 1fr); }
          .tiles { grid-template-columns: repeat(3, minmax(0, 1fr)); }
        }
        @media (max-width: 640px) {
          .topbar { flex-wrap: wrap; gap: 8px 16px; padding: 10px 14px; }
          .where { order: 3; flex-basis: 100%; flex-wrap: wrap; gap: 4px 16px; }
          main { padding: 12px; }
          .tiles { grid-template-columns: repeat(2, minmax(0, 1fr)); }
          .stats { grid-template-columns: repeat(3, minmax(0, 1fr)); }
        }
        @media (prefers-reduced-motion: reduce) {
          * { animation: none !important; transition: none !important; }
        }
        """#
}
