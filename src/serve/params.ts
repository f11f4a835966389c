import {TomaError} from '../errors.js'
import {parseAddress} from '../core/parse-address.js'
/**
 * A page's query parameters read strictly: an integer within bounds, a choice among names. A
 * value that is not one is said back to the user (the page answers `missing` with the reason),
 * never taken as some default.
 */
export class BadParameter extends Error {}

export function intParam(url: URL, name: string, min: number, max: number): number | undefined {
  const text = url.searchParams.get(name)
  if (text === null || text === '') return undefined
  const n = /^-?\d{1,16}$/.test(text) ? Number(text) : NaN
  if (!(Number.isSafeInteger(n) && n >= min && n <= max)) throw new BadParameter(`${name}=${text}: expected a whole number from ${min} to ${max}`)
  return n
}

export function choiceParam<T extends string>(url: URL, name: string, choices: readonly T[], fallback: T): T {
  const text = url.searchParams.get(name)
  if (text === null || text === '') return fallback
  if (!(choices as readonly string[]).includes(text)) throw new BadParameter(`${name}=${text}: expected one of ${choices.join(', ')}`)
  return text as T
}

export function textParam(url: URL, name: string): string {
  return (url.searchParams.get(name) ?? '').trim()
}

/** The address a page is about (`0x…` hex or decimal), as toma's commands read one. */
export function addressParam(url: URL, name = 'addr'): number {
  const text = url.searchParams.get(name)
  if (text === null) throw new BadParameter(`no ${name}= given`)
  try {
    return parseAddress(text)
  } catch (e) {
    if (e instanceof TomaError) throw new BadParameter(`${name}=${e.message}`)
    throw e
  }
}

/** Which page of a paged list a URL asks for, counted from 0 here; the URL counts from 1, as every page's does (absent: the first). */
export function pageParam(url: URL, name: string): number {
  return (intParam(url, name, 1, Number.MAX_SAFE_INTEGER) ?? 1) - 1
}

/** A page counted from 0 as a URL gives it: from 1, and absent for the first. */
export function urlPage(page: number): number | undefined {
  return page > 0 ? page + 1 : undefined
}
