import fs from 'node:fs'
import {describe, expect, it} from 'vitest'
import {schemaMarkdown} from '../../src/index/schema-doc.js'

const DOC = new URL('../../docs/INDEX-SCHEMA.md', import.meta.url)

describe('docs/INDEX-SCHEMA.md', () => {
  // The schema is the index's documentation: the committed page is what schema.ts generates.
  // UPDATE_INDEX_SCHEMA=1 writes it instead (after a change to the schema).
  it('is what src/index/schema.ts generates', () => {
    const generated = schemaMarkdown()
    if (process.env.UPDATE_INDEX_SCHEMA === '1') fs.writeFileSync(DOC, generated)
    expect(fs.readFileSync(DOC, 'utf8')).toBe(generated)
  })
})
