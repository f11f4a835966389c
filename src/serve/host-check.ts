/**
 * The Host headers the server answers to: its loopback names and the address it listens on, each
 * with its port. A page of another site whose name was made to resolve to 127.0.0.1 (DNS
 * rebinding) sends that site's name as Host, and is refused before the token is even looked at.
 */
export function allowedHosts(listenHost: string, port: number): Set<string> {
  const withPort = (h: string) => `${h.includes(':') ? `[${h}]` : h}:${port}`.toLowerCase()
  return new Set(['127.0.0.1', 'localhost', '::1', listenHost].map(withPort))
}

export function hostAllowed(header: string | undefined, allowed: Set<string>): boolean {
  return header !== undefined && allowed.has(header.toLowerCase())
}
