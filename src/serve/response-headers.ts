import {createHash} from 'node:crypto'
import {LEGEND_STYLES} from '../report/html/states-bar.js'

const styleHash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`

/**
 * The Content-Security-Policy of every answer: nothing loads but the server's own scripts, style
 * and pictures (data: SVG), no inline script at all, no inline style but the states legend's
 * swatches (allowed one by one by their hashes), no form posts elsewhere, no framing. Were a name
 * from the core ever to slip past the escaping as markup, none of it would run or load.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src 'self' 'unsafe-hashes' ${LEGEND_STYLES.map(styleHash).join(' ')}`,
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/** Sent with every answer, a refusal included: no sniffing, no referrer leaving (the URL once held the token), nothing cached. */
export const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
}
