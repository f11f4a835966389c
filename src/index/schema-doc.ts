import {INDEX_ARRAYS, LENGTH_GROUPS, META_FIELDS, PHASES, STAGES, type ArrayName} from './schema.js'
import {INDEX_FORMAT_VERSION} from './index-file.js'

/** A table cell: pipes escaped, so a doc line cannot break the table. */
const cell = (s: string) => s.replaceAll('|', '\\|')

/**
 * docs/INDEX-SCHEMA.md, generated from schema.ts: what an index holds, for a reader who does not
 * read the code. A test (test/index/schema-doc.test.ts) fails when the committed document differs.
 */
export function schemaMarkdown(): string {
  const lines = [
    '# What a toma index holds',
    '',
    `Generated from \`src/index/schema.ts\` (index format version ${INDEX_FORMAT_VERSION}); do not edit by hand.`,
    'Regenerate: `UPDATE_INDEX_SCHEMA=1 npx vitest run test/index/schema-doc.test.ts`.',
    '',
    'An index file is a 24-byte preamble (magic `TOMAIDX\\0`, format version, header length and offset),',
    'the arrays below, each 8-byte aligned, little-endian, then a JSON header: the format version, the',
    'stages the index holds, the meta and the array table (each array\'s element type, offset and',
    'length). A reader refuses an index whose array table disagrees with this schema (an array not',
    'declared, of another element type, a required one of a stage it holds missing, one of a stage it',
    'does not hold present, or a length group whose arrays differ in length).',
    '',
    '## Stages',
    '',
    'An analysis writes the model stage\'s index first and, unless told to stop there',
    '(`toma analyze --stage model`), replaces it with the whole one. A query that needs only the model',
    'answers from either.',
    '',
    '| Stage | What it holds |',
    '|---|---|',
    ...Object.entries(STAGES).map(([stage, doc]) => `| ${stage} | ${cell(doc)} |`),
    '',
    '## Arrays',
    '',
    '| Array | Element type | Length group | Phase | Readers | Meaning |',
    '|---|---|---|---|---|---|',
  ]
  for (const name of Object.keys(INDEX_ARRAYS) as ArrayName[]) {
    const a: {type: string | readonly string[]; group: string; phase: string; readers: readonly string[]; optional?: string; doc: string} = INDEX_ARRAYS[name]
    const type = typeof a.type === 'string' ? a.type : a.type.join(' or ')
    const readers = a.readers.length ? a.readers.map(r => r.replace(/^\S+/, m => `\`${m}\``)).join(', ') : '(none: kept for diagnosis)'
    const doc = a.optional ? `${a.doc}. Optional: ${a.optional}` : a.doc
    lines.push(`| \`${name}\` | ${type} | ${a.group} | ${a.phase} | ${cell(readers)} | ${cell(doc)} |`)
  }
  lines.push('', '## Length groups', '', 'Arrays of one group have one length; a derived group\'s length is its base group\'s, transformed.', '', '| Group | Length |', '|---|---|')
  for (const [group, g] of Object.entries(LENGTH_GROUPS)) lines.push(`| ${group} | ${cell(g.doc)} |`)
  lines.push('', '## Phases', '', '| Phase | Stage | What runs |', '|---|---|---|')
  for (const [phase, p] of Object.entries(PHASES)) lines.push(`| ${phase} | ${p.stage} | ${cell(p.doc)} |`)
  lines.push('', '## Meta', '', 'The header\'s `meta` object (`src/index/index-meta.ts`, checked by `metaProblem` on open):', '', '| Field | Meaning |', '|---|---|')
  for (const [field, doc] of Object.entries(META_FIELDS)) lines.push(`| \`${field}\` | ${cell(doc)} |`)
  return lines.join('\n') + '\n'
}
