import {randomBytes, timingSafeEqual} from 'node:crypto'

/**
 * Who may ask the server anything: whoever holds the token printed with its URL. The token is
 * 32 random bytes (base64url); the printed URL carries it once as `?token=`, after which a cookie
 * carries it (HttpOnly: no script reads it; SameSite=Strict: no other site's page sends it). The
 * cookie is named after the port: cookies are not kept apart by port, and two servers on one
 * machine must not overwrite each other's.
 */
export function newToken(): string {
  return randomBytes(32).toString('base64url')
}

/** The token's query parameter in the printed URL. */
export const TOKEN_PARAM = 'token'

export function cookieName(port: number): string {
  return `toma-${port}`
}

/**
 * Whether `given` is the token, in time that does not depend on where they differ (a guess
 * learns nothing from how long its refusal took). A given value of another length is still
 * compared, the token against itself, so that a wrong length takes as long as a wrong byte.
 */
export function tokenMatches(given: string | undefined, token: string): boolean {
  const expected = Buffer.from(token, 'utf8')
  const candidate = Buffer.from(given ?? '', 'utf8')
  const sameLength = candidate.length === expected.length
  const equal = timingSafeEqual(sameLength ? candidate : expected, expected)
  return sameLength && equal
}

/** The value of cookie `name` in a Cookie header, if any (the first one, as browsers send the most specific first). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/** The Set-Cookie header that lets the browser in after the token was shown once. */
export function tokenCookie(port: number, token: string): string {
  return `${cookieName(port)}=${token}; HttpOnly; SameSite=Strict; Path=/`
}
