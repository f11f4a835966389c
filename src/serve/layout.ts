import type {HeapSummary} from '../queries/heap-summary.js'
import {html, type Html} from '../report/html/html.js'
import type {ReportSection} from '../report/html/section.js'
import {SCRIPT_PATHS, STYLE_PATH, searchHref} from './links.js'
import type {ServeContext, ServePage} from './serve-page.js'

/** One entry of the navigation: a page's path and its label. */
export interface NavEntry {
  path: string
  label: string
}

export function navEntries(pages: readonly ServePage[]): NavEntry[] {
  return pages.flatMap(p => (p.nav ? [{path: p.path, label: p.nav}] : []))
}

/** What names the core in every page's header: its file, the process, the allocator, toma's version. */
function coreLine(ctx: ServeContext): string {
  const s = ctx.core.index.meta.summary as unknown as HeapSummary
  return `${ctx.core.corePath} · ${s.core.command ?? 'core'} (pid ${s.core.pid ?? '?'}) · ${s.allocator.kind} ${s.allocator.version} · toma ${ctx.toolVersion}`
}

/**
 * The common page around every answer: the title, the core, the navigation (every page's `nav`),
 * the search box (a GET form to /search), the body; the report's styles and the scripts come as
 * files of the server (the CSP allows no inline script), at the end, as the report has its own.
 */
export function layoutPage(ctx: ServeContext, nav: readonly NavEntry[], current: string, title: string, body: Html): string {
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="toma">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · toma serve</title>
<link rel="stylesheet" href="${STYLE_PATH}">
<link rel="icon" href="data:,">
</head>
<body>
<header>
<div class="top"><h1>${title}</h1>
<form class="search" action="${searchHref('')}" method="get" role="search"><input type="search" name="q" placeholder="address, type or symbol" aria-label="search"></form></div>
<div class="dim">${coreLine(ctx)}</div>
<nav>${nav.map(n => html`<a href="${n.path}"${n.path === current ? html` class="current" aria-current="page"` : ''}>${n.label}</a>`)}</nav>
</header>
<main>
${body}
</main>
<script src="${SCRIPT_PATHS.report}"></script>
<script src="${SCRIPT_PATHS.serve}"></script>
</body>
</html>
`.text
}

/** Report sections one after another, as the report lays them out (heading, body). */
export function sectionsHtml(sections: readonly ReportSection[]): Html {
  return html`${sections.map(s => html`<section id="section-${s.id}">
<h2>${s.title}</h2>
${s.body}
</section>
`)}`
}
