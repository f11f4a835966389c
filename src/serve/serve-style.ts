/** What the served pages add to the report's styles: the search box, the current page in the navigation, pagers. */
export const SERVE_STYLE = `
header .top { display: flex; flex-wrap: wrap; align-items: baseline; gap: 16px; justify-content: space-between; }
header form.search input { width: 28em; max-width: 100%; padding: 4px 8px; font: inherit; border: 1px solid var(--line); border-radius: 4px; }
nav a.current { font-weight: 600; color: var(--fg); }
.pager { display: flex; gap: 16px; margin: 10px 0; }
.pager a { color: #1f5fa8; }
form.list-filter { margin: 8px 0; display: flex; gap: 8px; align-items: center; }
form.list-filter input { padding: 3px 6px; font: inherit; }
td a, p a, dd a, li a { color: #1f5fa8; text-decoration: none; }
svg a rect.box:hover { opacity: 0.8; }
.missing { color: var(--bad); }
`
