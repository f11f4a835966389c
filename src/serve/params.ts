import {TomaError} from '../errors.js'
import {parseAddress} from '../core/parse-address.js'
import type {PageAnswer, ServeContext} from './serve-page.js'

/**
 * A page's query parameters, read strictly: a parameter that is there but not what the page
 * takes is an answer of its own (a `missing` page saying which), never a silent default.
 */
export class BadParam extends Error {}

/** A whole number in [0, max] (absent: `absent`). */
export function wholeParam(url: URL, name: string, absent: number, max = Number.MAX_SAFE_INTEGER): number {
  const text = url.searchParams.get(name)
  if (text === null || text === '') return absent
  if (!/^[0-9]{1,16}$/.test(text) || Number(text) > max) throw new BadParam(`${name}=${text}: not a whole number up to ${max}`)
  return Number(text)
}

/** The address a page is about (`0x…` hex or decimal), as toma's commands read one. */
export function addressParam(url: URL, name = 'addr'): number {
  const text = url.searchParams.get(name)
  if (text === null) throw new BadParam(`no ${name}= given`)
  try {
    return parseAddress(text)
  } catch (e) {
    if (e instanceof TomaError) throw new BadParam(`${name}=${e.message}`)
    throw e
  }
}

/** A page's answer, where a bad parameter is a `missing` answer saying which (one line, in the layout). */
export function answerChecked(answer: (ctx: ServeContext, url: URL) => PageAnswer): (ctx: ServeContext, url: URL) => PageAnswer {
  return (ctx, url) => {
    try {
      return answer(ctx, url)
    } catch (e) {
      if (e instanceof BadParam) return {kind: 'missing', message: e.message}
      throw e
    }
  }
}
