import {hierarchy, treemap, treemapDice} from 'd3-hierarchy'
import {html, num, type Html} from './html.js'
import {bytes} from '../table.js'
import {percent} from '../wording.js'

export interface StateBytes {
  state: string
  objects: number
  bytes: number
}

const WIDTH = 1200
const HEIGHT = 34
/** One colour per object state, in STATE_NAMES order: live first, then the free lists from the thread outwards. */
const FILLS: Record<string, string> = {
  live: '#4e79a7',
  'thread-cache': '#f28e2b',
  'central-cache': '#edc948',
  'transfer-cache': '#b07aa1',
  'page-heap': '#59a14f',
  returned: '#bab0ac',
}

const OTHER_FILL = '#999'
const fill = (s: string) => FILLS[s] ?? OTHER_FILL

/**
 * Every style attribute the legend writes (its swatches' colours): a page served under a CSP
 * without 'unsafe-inline' allows exactly these by their hashes (toma serve).
 */
export const LEGEND_STYLES = [...Object.values(FILLS), OTHER_FILL].map(c => `background:${c}`)

/**
 * The heap's bytes per object state as one bar (d3-hierarchy's dice tiling lays the segments out
 * left to right), with a legend that gives each state's bytes and objects.
 */
export function statesBarSvg(states: StateBytes[]): Html {
  const total = states.reduce((n, s) => n + s.bytes, 0)
  const root = hierarchy<{state?: StateBytes; children?: Array<{state: StateBytes}>}>({children: states.filter(s => s.bytes > 0).map(state => ({state}))}).sum(d => d.state?.bytes ?? 0)
  const laid = treemap<{state?: StateBytes}>().tile(treemapDice).size([WIDTH, HEIGHT])(root)
  const segments = laid.leaves().map(
    l => html`<rect class="state" data-state="${l.data.state!.state}" data-bytes="${l.data.state!.bytes}" x="${l.x0}" y="0" width="${l.x1 - l.x0}" height="${HEIGHT}" fill="${fill(l.data.state!.state)}"><title>${l.data.state!.state}: ${bytes(l.data.state!.bytes)} (${num(l.data.state!.bytes)} bytes, ${num(l.data.state!.objects)} objects)</title></rect>`,
  )
  return html`<svg id="states-bar" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" preserveAspectRatio="none" role="img" aria-label="bytes per object state" xmlns="http://www.w3.org/2000/svg">${segments}</svg>
<div class="legend">${states.map(s => html`<span><i style="background:${fill(s.state)}"></i>${s.state} ${bytes(s.bytes)}${total > 0 ? ` (${percent(s.bytes / total)})` : ''}, ${num(s.objects)} objects</span>`)}</div>`
}
