import {isIP} from 'node:net'
import {TomaError} from '../errors.js'

/** Where the server listens: an IP address (no name: a name could resolve anywhere) and a port (0: any free one). */
export interface ListenAddress {
  host: string
  port: number
}

/** By default: loopback, a free port. */
export const DEFAULT_LISTEN: ListenAddress = {host: '127.0.0.1', port: 0}

/** `--listen ADDR:PORT`: `127.0.0.1:8080`, `[::1]:0`, `0.0.0.0:8080`. Anything else is refused with one line. */
export function parseListen(text: string): ListenAddress {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|(\d{1,3}(?:\.\d{1,3}){3})):(\d{1,5})$/.exec(text)
  const host = m ? (m[1] ?? m[2])! : ''
  const port = m ? Number(m[3]) : NaN
  const family = isIP(host)
  if (!m || (m[1] !== undefined ? family !== 6 : family !== 4) || !(port >= 0 && port <= 65535)) {
    throw new TomaError(`--listen ${text}: expected an IP address and a port, e.g. 127.0.0.1:8080 or [::1]:8080 (port 0: any free one)`)
  }
  return {host, port}
}

/** Whether only this machine can reach the address (127.0.0.0/8, ::1). */
export function isLoopback(host: string): boolean {
  return host === '::1' || /^127\./.test(host)
}

/** The line said on stderr when the server is reachable from elsewhere (it still starts: the user asked for it). */
export function exposedWarning(a: ListenAddress): string {
  return `warning: listening on ${a.host}, not loopback: anyone who can reach this machine and learns the URL can read the core's memory`
}
