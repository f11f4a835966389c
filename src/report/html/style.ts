/** The page's styles (inline: the report is one file that opens from a mail attachment). */
export const PAGE_STYLE = `
:root { --fg: #1d232b; --dim: #66707c; --line: #d8dde3; --bg: #fff; --head: #f3f5f7; --warn: #a35200; --bad: #b3261e; --ok: #1e7b34; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); margin: 0; }
header { padding: 16px 24px; border-bottom: 1px solid var(--line); background: var(--head); }
header h1 { margin: 0 0 4px; font-size: 20px; }
nav { margin-top: 8px; display: flex; flex-wrap: wrap; gap: 12px; }
nav a { color: #1f5fa8; text-decoration: none; }
main { padding: 8px 24px 40px; max-width: 1400px; }
section { margin-top: 24px; }
h2 { font-size: 17px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 16px 0 6px; }
code, .mono, td { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px; }
table { border-collapse: collapse; margin: 4px 0; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 10px; text-align: left; vertical-align: top; }
th { background: var(--head); font-weight: 600; font-family: system-ui, sans-serif; font-size: 13px; white-space: nowrap; }
table.sortable th { cursor: pointer; user-select: none; }
th[aria-sort="ascending"]::after { content: " \\25B2"; }
th[aria-sort="descending"]::after { content: " \\25BC"; }
.n { text-align: right; white-space: nowrap; }
.dim, .more { color: var(--dim); }
.warn { color: var(--warn); }
.bad { color: var(--bad); font-weight: 600; }
.ok { color: var(--ok); }
.filter-line { margin: 6px 0; }
input.filter { font: inherit; padding: 3px 6px; width: 24em; }
.facts { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; }
.facts dt { color: var(--dim); }
.facts dd { margin: 0; }
.path { margin: 4px 0 8px 0; padding-left: 12px; border-left: 3px solid var(--line); }
.path div { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12.5px; }
.suspect { margin-bottom: 18px; }
details { margin: 4px 0; }
summary { cursor: pointer; }
svg text { font: 11px system-ui, sans-serif; pointer-events: none; }
.legend span { display: inline-block; margin-right: 14px; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: middle; }
`
