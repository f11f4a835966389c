import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import ts from 'typescript'
import {expect, it} from 'vitest'

/**
 * JavaScript's `<<`, `>>`, `>>>`, `&`, `|`, `^` and `~` work on 32 bits: `1 << 32` is 1, and an
 * address, a size or a page number past 2^31 comes out negative or cut. This reads every source
 * file's syntax tree and lists each such operator that meets a value of that kind (an operand named
 * like an address, size, count, offset or page; a shift by 31 or more; a constant past 32 bits),
 * leaving out BigInt arithmetic. Every place listed must be one of those below, each shown safe.
 */
const SRC = fileURLToPath(new URL('../../src', import.meta.url))

/** `file: expression` → why its operands stay below 2^32 (or the 32-bit result is what is meant). */
const AUDITED: Record<string, string> = {
  'graph/edge-words.ts: size >>> 2': "a read window's byte size, at most a few MiB",
  'graph/object-scan.ts: (objStart - bufAddr) >>> 2': 'an offset inside one read chunk (1 MiB)',
  'dominators/dominators.ts: 1 << (start & 31)': 'a vertex id (a slot index) picks its bit: below 2^32',
  'dominators/dominators.ts: entered[start >>> 5]! |= 1 << (start & 31)': 'a vertex id (a slot index) picks its bit: below 2^32',
  'dominators/dominators.ts: start & 31': 'a vertex id (a slot index) picks its bit: below 2^32',
  'dominators/dominators.ts: start >>> 5': 'a vertex id (a slot index) picks its bit: below 2^32',
  'graph/live-lookup.ts: (state.length + 31) >>> 5': "words of a bitmap over a typed array's length, below 2^32",
  'graph/reachability.ts: (objectCount + 31) >>> 5': 'words of a bitmap over the slots, fewer than 2^32',
  'graph/reachability.ts: objectCount >>> 6': 'a slot count: slots index typed arrays, which hold fewer than 2^32 elements',
  'index/heap-index.ts: objectCount >>> SLOT_BLOCK_SHIFT': 'a slot count: slots index typed arrays, which hold fewer than 2^32 elements',
  'tcmalloc/pagemap.ts: pages.length & 0xffff': "how often progress is told: a typed array's length is below 2^32",
}

const RISKY_NAME = /(addr|address|size|sz$|bytes|length|offset|count|total|pages?\b|page[A-Z]|\bstart\b|\bend\b|limit)/i
const K = ts.SyntaxKind
const BIT_OPS = new Set([
  K.LessThanLessThanToken,
  K.GreaterThanGreaterThanToken,
  K.GreaterThanGreaterThanGreaterThanToken,
  K.AmpersandToken,
  K.BarToken,
  K.CaretToken,
  K.LessThanLessThanEqualsToken,
  K.GreaterThanGreaterThanEqualsToken,
  K.GreaterThanGreaterThanGreaterThanEqualsToken,
  K.AmpersandEqualsToken,
  K.BarEqualsToken,
  K.CaretEqualsToken,
])
const SHIFTS = new Set([K.LessThanLessThanToken, K.GreaterThanGreaterThanToken, K.GreaterThanGreaterThanGreaterThanToken, K.LessThanLessThanEqualsToken, K.GreaterThanGreaterThanEqualsToken, K.GreaterThanGreaterThanGreaterThanEqualsToken])

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, {withFileTypes: true}).flatMap(e => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : []
  })
}

/** Whether an operand is BigInt arithmetic (a literal or a BigInt() call anywhere in it). */
function isBigInt(node: ts.Node): boolean {
  let big = false
  const visit = (n: ts.Node) => {
    if (n.kind === K.BigIntLiteral || (ts.isCallExpression(n) && n.expression.getText() === 'BigInt')) big = true
    else ts.forEachChild(n, visit)
  }
  visit(node)
  return big
}

/**
 * The names that stand for an operand's value: `a.b.count` is `count`, `f(x).flags` is `flags`, an
 * element `list[i]` is `list`'s, a call is its callee's; arguments and indexes are other values.
 */
function valueNames(n: ts.Node): string[] {
  if (ts.isIdentifier(n)) return [n.text]
  if (ts.isPropertyAccessExpression(n)) return [n.name.text]
  if (ts.isElementAccessExpression(n) || ts.isCallExpression(n) || ts.isNonNullExpression(n) || ts.isParenthesizedExpression(n) || ts.isAsExpression(n)) return valueNames(n.expression)
  if (ts.isConditionalExpression(n)) return [...valueNames(n.whenTrue), ...valueNames(n.whenFalse)]
  if (ts.isBinaryExpression(n)) return [...valueNames(n.left), ...valueNames(n.right)]
  if (ts.isPrefixUnaryExpression(n) || ts.isPostfixUnaryExpression(n)) return valueNames(n.operand)
  return []
}

/** Why an operator meeting these operands can cut a value past 32 bits, or '' when it cannot. */
function risk(operator: ts.SyntaxKind, operands: ts.Expression[]): string {
  if (operands.some(isBigInt)) return ''
  for (const o of operands) {
    if (ts.isNumericLiteral(o) && Number(o.text) > 0xffff_ffff) return 'a constant past 32 bits'
    if (valueNames(o).some(n => RISKY_NAME.test(n))) return 'an operand named like an address, size, count or page'
  }
  const count = operands[1]
  if (SHIFTS.has(operator) && count && ts.isNumericLiteral(count) && Number(count.text) >= 31) return 'a shift by 31 or more'
  return ''
}

function findings(): string[] {
  const out: string[] = []
  for (const file of sourceFiles(SRC)) {
    const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
    const rel = path.relative(SRC, file).split(path.sep).join('/')
    const visit = (n: ts.Node) => {
      let why = ''
      if (ts.isBinaryExpression(n) && BIT_OPS.has(n.operatorToken.kind)) why = risk(n.operatorToken.kind, [n.left, n.right])
      else if (ts.isPrefixUnaryExpression(n) && n.operator === K.TildeToken) why = risk(K.TildeToken, [n.operand])
      if (why) out.push(`${rel}: ${n.getText().replace(/\s+/g, ' ')}`)
      ts.forEachChild(n, visit)
    }
    visit(source)
  }
  return [...new Set(out)].sort()
}

it('no 32-bit operator meets an address, size, count or page number except the audited places', () => {
  expect(findings()).toEqual(Object.keys(AUDITED).sort())
})

it('the check itself finds the span-set bug and a negative-padding bug of the kinds it guards against', () => {
  const probe = (code: string) => {
    const source = ts.createSourceFile('probe.ts', code, ts.ScriptTarget.Latest, true)
    const found: string[] = []
    const visit = (n: ts.Node) => {
      if (ts.isBinaryExpression(n) && BIT_OPS.has(n.operatorToken.kind) && risk(n.operatorToken.kind, [n.left, n.right])) found.push(n.getText())
      else if (ts.isPrefixUnaryExpression(n) && n.operator === K.TildeToken && risk(K.TildeToken, [n.operand])) found.push(n.getText())
      ts.forEachChild(n, visit)
    }
    visit(source)
    return found
  }
  expect(probe('if (count > 1 << 32) f()')).toEqual(['1 << 32'])
  expect(probe('const pad = (descsz + 3) & ~3')).toEqual(['(descsz + 3) & ~3'])
  expect(probe('const page = address >>> 13')).toEqual(['address >>> 13'])
  expect(probe('const mask = (1n << 64n) - 1n; const w = BigInt(x) & mask')).toEqual([])
  expect(probe('const bit = 1 << (slot & 31)')).toEqual([])
})
