import {ARRAY_NAMES, INDEX_ARRAYS, LENGTH_GROUPS, STAGE_NAMES, declaredTypes, stageOf, type ArrayName, type LengthGroup, type Stage} from './schema.js'

/** What the schema asks of one array of a file's table. */
interface TableEntry {
  type: string
  length: number
}

/** Why an array may not be written or read with this element type, or null when the schema declares it so. */
export function declarationProblem(name: string, type: string): string | null {
  const types = declaredTypes(name)
  if (!types) return `array ${name} is not one the index schema declares`
  if (!(types as readonly string[]).includes(type)) return `array ${name} is ${type}, the index schema says ${types.join(' or ')}`
  return null
}

/**
 * Why a header's stage list is not one an analysis writes (the first stages, in order, at least
 * the model), or null.
 */
export function stagesProblem(stages: unknown): string | null {
  if (!Array.isArray(stages) || stages.length === 0 || stages.length > STAGE_NAMES.length) return 'bad stage list'
  return stages.every((s, i) => s === STAGE_NAMES[i]) ? null : 'bad stage list'
}

/**
 * Why an index's array table disagrees with the schema, or null: every array declared and of a
 * declared type, every array not optional of the stages it holds present and none of a stage it
 * does not hold, and the arrays of each length group (schema.ts) of one length, the derived
 * groups' that length transformed. The one place these are checked: a reader trusts them after this.
 */
export function arrayTableProblem(table: Readonly<Record<string, TableEntry>>, stages: readonly Stage[] = STAGE_NAMES): string | null {
  for (const [name, e] of Object.entries(table)) {
    const problem = declarationProblem(name, e.type)
    if (problem) return problem
    if (!stages.includes(stageOf(name as ArrayName))) return `array ${name} belongs to the ${stageOf(name as ArrayName)} stage, which the index does not hold`
  }
  for (const name of ARRAY_NAMES) {
    if (!Object.hasOwn(table, name) && !('optional' in INDEX_ARRAYS[name]) && stages.includes(stageOf(name))) return `no array ${name}`
  }
  const lengths = new Map<LengthGroup, {name: string; length: number}>()
  for (const name of ARRAY_NAMES) {
    if (!Object.hasOwn(table, name)) continue
    const group = INDEX_ARRAYS[name].group
    const length = table[name]!.length
    const first = lengths.get(group)
    if (!first) lengths.set(group, {name, length})
    else if (first.length !== length) return `arrays ${first.name} and ${name} differ in length (both one per ${group})`
  }
  for (const [group, first] of lengths) {
    const spec = LENGTH_GROUPS[group] as {of?: LengthGroup; length?: (n: number) => number}
    const base = spec.of && lengths.get(spec.of)
    if (base && spec.length!(base.length) !== first.length) return `array ${first.name} does not have the length its group (${group}) takes from ${base.name}`
  }
  return null
}
