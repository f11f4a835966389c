import {html, raw, type Html} from './html.js'
import {PAGE_SCRIPT, PAGE_SCRIPT_SOURCE} from './script.js'
import type {ReportSection} from './section.js'
import {PAGE_STYLE} from './style.js'

/**
 * The whole page: one file with its styles, script and pictures inline, and a Content-Security-Policy
 * that forbids loading anything (so a report opened from a mail attachment never reaches the network)
 * and runs no script but the page's own, named by its hash: were a name from the core ever to slip
 * past the escaping as markup, its script would not run.
 */
export function htmlPage(title: string, subtitle: Html | string, sections: ReportSection[]): string {
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="toma">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src ${raw(PAGE_SCRIPT_SOURCE)}; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${raw(PAGE_STYLE)}</style>
</head>
<body>
<header>
<h1>${title}</h1>
<div class="dim">${subtitle}</div>
<nav>${sections.map(s => html`<a href="#section-${s.id}">${s.title}</a>`)}</nav>
</header>
<main>
${sections.map(s => html`<section id="section-${s.id}">
<h2>${s.title}</h2>
${s.body}
</section>
`)}</main>
<script>${raw(PAGE_SCRIPT)}</script>
</body>
</html>
`.text
}
