import {stripAliases, type BitField, type DwarfType, type StructType} from '../elf/dwarf/types.js'
import type {DwarfTypeFinder, FoundStruct} from './dwarf-type-finder.js'
import type {GoogleLayout} from './layout.js'

type SpanLayout = GoogleLayout['span']

/** The model reads the span's packed flags as one little-endian 64-bit word. */
const WORD_BITS = 64
/** small_num_pages_ / SmallSpanState::num_pages: the model reads 6 bits (kMaxNumPageBits). */
const SMALL_NUM_PAGES_BITS = 6
/** Anonymous structs and unions nested deeper than this in the span's union are not searched. */
const MAX_NESTING = 8

/**
 * The span record's layout (Span), from its DWARF: the head fields, the record's kind (first_page_
 * a bit-field of a packed word, or whole PageId / Length fields with a flags byte), the union,
 * and what the union holds. Fields not found are written down in the finder.
 *
 * Two values rest on tcmalloc's code rather than on its types, and say so here:
 * - cacheEntries: where Span declares kLargeCacheSize (2024-03 to 2024-12), a span allocated for
 *   it keeps that many cache entries, past the record (its declared `cache[0]` says nothing): the
 *   constant wins. Otherwise the declared cache array's length, or Span::kCacheSize.
 * - cache: the ObjIdx cache and the bitmap share the union's storage; where the cache is declared
 *   `cache[0]` (DWARF drops a zero-length array) the bitmap's place is the cache's.
 */
export function spanLayoutFromDwarf(f: DwarfTypeFinder, span: FoundStruct): SpanLayout {
  const S = span.type
  const head = {
    size: S.size,
    embedCount: f.offset(span, 'embed_count_'),
    freelist: f.offset(span, 'freelist_'),
    allocated: f.offset(span, 'allocated_'),
    ...cacheSizeField(f, span),
  }
  // The anonymous union that holds the bitmap (2023's Span has another, of freelist_ and reciprocal_, before it).
  const unions = S.members.filter(m => m.name === '' && isUnion(m.type))
  const unionMember = unions.find(m => deepMember(stripAliases(m.type) as StructType, ['bitmap', 'bitmap_'], 0)) ?? unions[0]
  const union = unionMember?.offset ?? f.lacks('Span: its anonymous union')
  const unionType = unionMember ? (stripAliases(unionMember.type) as StructType) : null
  const cache = unionType ? deepMember(unionType, ['cache', 'cache_'], 0) : null
  const bitmap = unionType ? deepMember(unionType, ['bitmap', 'bitmap_'], 0) : null
  if (unionType && !bitmap) f.lacks('Span: the bitmap in its union')
  let cacheAt = cache?.offset ?? bitmap?.offset ?? NaN
  if (cache && bitmap && cache.offset !== bitmap.offset) cacheAt = f.lacks(`Span: its cache (union + ${cache.offset}) and bitmap (union + ${bitmap.offset}) are apart; the model reads them at one place`)
  const cacheCount = cache ? stripAliases(cache.type) : null
  const cacheEntries = f.constant(span, 'kLargeCacheSize') ?? (cacheCount?.kind === 'array' && cacheCount.count > 0 ? cacheCount.count : undefined) ?? f.constant(span, 'kCacheSize') ?? f.lacks('Span: its cache length (kLargeCacheSize, cache[N] or kCacheSize)')
  const bitmapName = bitmap ? /Bitmap<(\d+)>$/.exec(stripAliases(bitmap.type).name) : null
  const bitmapBits = bitmapName ? Number(bitmapName[1]) : f.constant(span, 'kBitmapSize') ?? f.lacks('Span: its bitmap size (Bitmap<N> or kBitmapSize)')
  return {
    ...head,
    record: recordLayout(f, span, unionType),
    union,
    cache: union + cacheAt,
    cacheEntries,
    bitmapBits,
  }
}

/** cache_size_: a whole byte, or a bit-field (4 bits in 2024-2025) at the low bits of its byte. */
function cacheSizeField(f: DwarfTypeFinder, span: FoundStruct): {cacheSize: number; cacheSizeBits: 4 | 8} {
  // Bit-fields first: a DWARF 5 bit-field is also among the whole members, at offset 0 (types.ts).
  const bits = f.bitField(span, 'cache_size_')
  if (bits) {
    if (bits.bitSize === 4 && bits.bitOffset % 8 === 0) return {cacheSize: bits.bitOffset / 8, cacheSizeBits: 4}
    return {cacheSize: f.lacks(`Span::cache_size_ (a ${bits.bitSize}-bit field at bit ${bits.bitOffset}: the model reads 4 bits at a byte's start)`), cacheSizeBits: 8}
  }
  return {cacheSize: f.offset(span, 'cache_size_'), cacheSizeBits: 8}
}

/** Where first_page_ and the page count are: a packed word of bit-fields, or whole fields and a flags byte. */
function recordLayout(f: DwarfTypeFinder, span: FoundStruct, unionType: StructType | null): SpanLayout['record'] {
  const firstPage = f.bitField(span, 'first_page_')
  if (!firstPage) {
    const sampled = f.bitField(span, 'sampled_')
    return {
      kind: 'fields',
      firstPage: f.offset(span, 'first_page_'),
      numPages: f.offset(span, 'num_pages_'),
      flagsByte: sampled ? Math.floor(sampled.bitOffset / 8) : f.lacks('Span::sampled_ (a bit-field)'),
      sampledBit: sampled ? sampled.bitOffset % 8 : NaN,
    }
  }
  if (firstPage.bitOffset % 8 !== 0) f.lacks(`Span::first_page_ (at bit ${firstPage.bitOffset}, not a byte's start)`)
  const end = firstPage.bitOffset + firstPage.bitSize
  /** Bits between first_page_'s last bit and the flag's first, when the flag lies within first_page_'s 64-bit word. */
  const after = (flag: BitField | null, name: string, width: number): number => {
    if (!flag) return f.lacks(`Span::${name}`)
    if (flag.bitSize !== width || flag.bitOffset < end || flag.bitOffset + width > firstPage.bitOffset + WORD_BITS) {
      return f.lacks(`Span::${name} (${flag.bitSize} bits at bit ${flag.bitOffset}: not ${width} bits within first_page_'s word)`)
    }
    return flag.bitOffset - end
  }
  const small = f.bitField(span, 'small_num_pages_')
  let smallNumPagesAfter: number | null = null
  if (small) smallNumPagesAfter = after(small, 'small_num_pages_', SMALL_NUM_PAGES_BITS)
  else if (!unionHasSmallNumPages(unionType)) f.lacks('Span::small_num_pages_ or SmallSpanState::num_pages (the small span\'s page count)')
  return {
    kind: 'bitfields',
    bitsWord: firstPage.bitOffset / 8,
    isLargeAfter: after(f.bitField(span, 'is_large_span_'), 'is_large_span_', 1),
    sampledAfter: after(f.bitField(span, 'sampled_'), 'sampled_', 1),
    smallNumPagesAfter,
  }
}

/** SmallSpanState (2024-2025): a member of the union whose num_pages is the low 6 bits of the union's first word. */
function unionHasSmallNumPages(unionType: StructType | null): boolean {
  if (!unionType) return false
  return unionType.members.some(m => {
    const t = stripAliases(m.type)
    return m.offset === 0 && t.kind === 'struct' && t.bitFields.some(b => b.name === 'num_pages' && b.bitOffset === 0 && b.bitSize === SMALL_NUM_PAGES_BITS)
  })
}

function isUnion(t: DwarfType): boolean {
  const bare = stripAliases(t)
  return bare.kind === 'struct' && bare.union
}

/** The first member with one of these names anywhere inside a struct (named or anonymous members, depth first), with its offset from the struct's start. */
function deepMember(s: StructType, names: string[], depth: number): {offset: number; type: DwarfType} | null {
  const own = s.members.find(m => names.includes(m.name))
  if (own) return {offset: own.offset, type: own.type}
  if (depth >= MAX_NESTING) return null
  for (const m of s.members) {
    const t = stripAliases(m.type)
    if (t.kind !== 'struct') continue
    const inner = deepMember(t, names, depth + 1)
    if (inner) return {offset: m.offset + inner.offset, type: inner.type}
  }
  return null
}
