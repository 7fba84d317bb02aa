import FoundationEssentials
import SpokesCluster

extension JobReportPage {
    /// The report's only CSS, the content of its one `<style>` element. Light, with
    /// the dashboard's colours; prints on white with sections kept whole.
    static let style = #"""
        :root { --ink: #1f2937; --muted: #6b7280; --line: #e5e7eb; --panel: #ffffff; --ground: #f4f6f9;
          --accent: #2563eb; --ok: #15803d; --ok-bg: #ecfdf3; --bad: #b91c1c; --bad-bg: #fef2f2;
          --warn: #b45309; --warn-bg: #fffbeb; }
        * { box-sizing: border-box; }
        html { -webkit-text-size-adjust: 100%; }
        body { margin: 0; background: var(--ground); color: var(--ink);
          font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
          font-variant-numeric: tabular-nums; }
        main { max-width: 1120px; margin: 0 auto; padding: 28px 24px 40px; }
        header.masthead { margin-bottom: 18px; }
        .eyebrow { margin: 0; color: var(--muted); font-size: 13px; letter-spacing: .08em; text-transform: uppercase; font-weight: 600; }
        .eyebrow .logo { color: var(--accent); }
        h1 { margin: 2px 0 4px; font-size: 30px; line-height: 1.2; }
        h1 .network-id { color: var(--muted); font-weight: 400; font-size: 22px; }
        .meta { margin: 0; color: var(--muted); }
        code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: .92em;
          background: #eef1f5; border-radius: 4px; padding: 1px 5px; word-break: break-all; }
        section { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 18px 22px;
          margin: 0 0 18px; }
        h2 { margin: 0 0 12px; font-size: 18px; }
        h3 { margin: 0 0 6px; font-size: 15px; }
        .verdict { display: flex; gap: 14px; align-items: flex-start; border-width: 1px 1px 1px 6px; }
        .verdict.ok { border-color: #bbf7d0 #bbf7d0 #bbf7d0 var(--ok); background: var(--ok-bg); }
        .verdict.bad { border-color: #fecaca #fecaca #fecaca var(--bad); background: var(--bad-bg); }
        .verdict.warn { border-color: #fde68a #fde68a #fde68a var(--warn); background: var(--warn-bg); }
        .verdict .mark { font-size: 26px; line-height: 1; font-weight: 700; }
        .verdict.ok .mark, .verdict.ok strong { color: var(--ok); }
        .verdict.bad .mark, .verdict.bad strong { color: var(--bad); }
        .verdict.warn .mark, .verdict.warn strong { color: var(--warn); }
        .verdict p { margin: 0; }
        .verdict strong { font-size: 18px; }
        .verdict ul { margin: 6px 0 0; padding-left: 20px; }
        .figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 12px;
          background: none; border: 0; padding: 0; }
        .figure { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 12px 16px; }
        .figure .value { display: block; font-size: 24px; font-weight: 650; line-height: 1.25; }
        .figure .name { color: var(--muted); font-size: 13px; }
        .figure .detail { display: block; color: var(--muted); font-size: 13px; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: 6px 10px 6px 0; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { font-weight: 600; color: var(--muted); font-size: 13px; }
        table.summary th { width: 170px; color: var(--ink); font-size: 15px; }
        td.number, th.number { text-align: right; }
        .ok-text { color: var(--ok); font-weight: 600; }
        .bad-text { color: var(--bad); font-weight: 600; }
        .note { color: var(--muted); font-size: 13px; margin: 8px 0 0; }
        .pair { display: grid; grid-template-columns: 1fr 1fr; gap: 20px; }
        figure { margin: 0; }
        figcaption { font-weight: 600; margin-bottom: 6px; }
        figcaption .counts { color: var(--muted); font-weight: 400; font-size: 13px; }
        svg { display: block; max-width: 100%; height: auto; font-family: inherit; }
        svg text { fill: #374151; font-size: 11px; }
        svg .axis-title { font-size: 12px; fill: var(--muted); }
        svg .grid { stroke: #eef0f3; }
        svg .axis { stroke: #9ca3af; }
        svg .bar { fill: var(--accent); }
        svg .bar:hover { fill: #1d4ed8; }
        svg .empty { fill: var(--muted); font-size: 14px; }
        svg .track { fill: #f1f3f6; }
        svg.nodes .label { font-size: 13px; fill: var(--ink); }
        svg.nodes .value { font-size: 13px; }
        svg .map-ground { fill: #eef2f6; stroke: #dde3ea; }
        svg .station, svg .swatch-dot { stroke: #334155; stroke-opacity: .55; stroke-width: .6; }
        svg .scale-bar path { fill: none; stroke: #475569; stroke-width: 1.2; }
        svg .scale-bar text { fill: #475569; font-size: 10px; }
        .legend { display: flex; flex-wrap: wrap; gap: 4px 14px; align-items: center; margin: 0 0 12px; color: var(--muted);
          font-size: 13px; }
        .legend svg { display: inline-block; vertical-align: middle; }
        .legend .key { display: inline-flex; align-items: center; gap: 5px; }
        table.changes { max-width: 760px; margin-bottom: 4px; }
        table.users td:first-child, table.users th:first-child { width: 90px; }
        section h3 { margin-top: 18px; }
        .reasons { margin: 0; padding-left: 18px; }
        .reasons li { overflow-wrap: anywhere; }
        footer { color: var(--muted); font-size: 12px; text-align: center; margin-top: 8px; }
        @media screen and (max-width: 760px) { .pair { grid-template-columns: 1fr; } main { padding: 16px 12px; } }
        @media print {
          @page { size: A4; margin: 12mm; }
          body { background: #fff; font-size: 11pt; }
          main { max-width: none; padding: 0; }
          .figures { grid-template-columns: repeat(5, 1fr); }
          .figure .value { font-size: 18px; }
          section, .figure { break-inside: avoid; border-color: #d1d5db; }
          section.long { break-inside: auto; }
          tr { break-inside: avoid; }
          .verdict, .verdict .mark, svg { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
        }
        """#

    /// A Content-Security-Policy under which the report renders exactly as it is: no
    /// scripts, no requests, and only this report's own `<style>` element (allowed by
    /// its SHA-256). A server handing out reports can send it as is.
    public static let contentSecurityPolicy: String = {
        let digest = Data(SHA256.hash(Array(style.utf8))).base64EncodedString()
        return "default-src 'none'; style-src 'sha256-\(digest)'; img-src data:; base-uri 'none'; form-action 'none'"
    }()
}
