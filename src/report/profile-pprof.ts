import zlib from 'node:zlib'
import {PbfWriter} from 'pbf'
import type {HeapProfile} from '../queries/heap-profile.js'

/** Field numbers of perftools.profiles.Profile (google/pprof proto/profile.proto). */
const PROFILE = {sampleType: 1, sample: 2, mapping: 3, location: 4, function: 5, stringTable: 6, periodType: 11, period: 12, comment: 13} as const
const VALUE_TYPE = {type: 1, unit: 2} as const
const SAMPLE = {locationId: 1, value: 2, label: 3} as const
const LABEL = {key: 1, num: 3, numUnit: 4} as const
const MAPPING = {id: 1, memoryStart: 2, memoryLimit: 3, fileOffset: 4, filename: 5, buildId: 6, hasFunctions: 7} as const
const LOCATION = {id: 1, mappingId: 2, address: 3, line: 4} as const
const LINE = {functionId: 1} as const
const FUNCTION = {id: 1, name: 2, systemName: 3, filename: 4} as const

/**
 * pprof's estimate of how many objects and bytes one sample stands for (profile/legacy_profile.go,
 * scaleHeapSample, applied to every heap_v2 sample): a sample of size S is taken with probability
 * 1 − exp(−S/period), so both are divided by that; truncated to integers as pprof does.
 */
export function unsample(count: number, bytes: number, period: number): [number, number] {
  if (count === 0 || bytes === 0) return [0, 0]
  if (period <= 1) return [count, bytes]
  const scale = 1 / (1 - Math.exp(-bytes / count / period))
  return [Math.trunc(count * scale), Math.trunc(bytes * scale)]
}

/**
 * The heap profile as profile.proto, gzipped: sample types inuse_objects/count and
 * inuse_space/bytes, unsampled as pprof unsamples gperftools' heap_v2 text, one sample per sampled
 * object with its requested size as the `bytes` label (as pprof's legacy parser makes them). A
 * location per return address (less one for all but the innermost frame, pprof's convention: the
 * address then falls inside the call), one function per name with one Line each, mappings for the
 * executable file mappings of the core.
 */
export function pprofHeapProfile(p: HeapProfile): Buffer {
  const strings = new Map<string, number>([['', 0]])
  const str = (s: string) => {
    let i = strings.get(s)
    if (i === undefined) strings.set(s, (i = strings.size))
    return i
  }
  // The file mappings that hold code: executable ones, and any a return address lies in (its protection unknown).
  const pcs = [...p.names.keys()]
  const mappings = p.maps.filter(m => m.path !== '' && (m.permissions.includes('x') || pcs.some(pc => pc > m.start && pc <= m.end)))
  const mappingOf = (addr: number) => mappings.findIndex(m => addr >= m.start && addr < m.end) + 1
  const functions = new Map<string, {id: number; name: string; file: string}>()
  const locations = new Map<number, {id: number; mapping: number; fn: number}>()
  const samples = p.samples.map(s => {
    const ids = s.stack.map((pc, depth) => {
      const address = depth === 0 ? pc : pc - 1
      let loc = locations.get(address)
      if (!loc) {
        const n = p.names.get(pc)
        const name = n?.function ?? n?.symbol ?? null
        let fn = 0
        if (name !== null) {
          const key = `${name}\0${n!.module ?? ''}`
          let f = functions.get(key)
          if (!f) functions.set(key, (f = {id: functions.size + 1, name, file: n!.module ?? ''}))
          fn = f.id
        }
        locations.set(address, (loc = {id: locations.size + 1, mapping: mappingOf(address), fn}))
      }
      return loc.id
    })
    return {ids, values: unsample(1, s.requestedSize, p.period), size: s.requestedSize}
  })

  const pbf = new PbfWriter()
  const valueType = (tag: number, type: string, unit: string) =>
    pbf.writeMessage(tag, (v: {type: number; unit: number}, w) => {
      w.writeVarintField(VALUE_TYPE.type, v.type)
      w.writeVarintField(VALUE_TYPE.unit, v.unit)
    }, {type: str(type), unit: str(unit)})
  valueType(PROFILE.sampleType, 'inuse_objects', 'count')
  valueType(PROFILE.sampleType, 'inuse_space', 'bytes')
  const bytesKey = str('bytes')
  for (const s of samples) {
    pbf.writeMessage(PROFILE.sample, (x: typeof s, w) => {
      w.writePackedVarint(SAMPLE.locationId, x.ids)
      w.writePackedVarint(SAMPLE.value, x.values)
      w.writeMessage(SAMPLE.label, (size: number, l) => {
        l.writeVarintField(LABEL.key, bytesKey)
        l.writeVarintField(LABEL.num, size)
        l.writeVarintField(LABEL.numUnit, bytesKey)
      }, x.size)
    }, s)
  }
  mappings.forEach((m, i) => {
    const filename = str(m.path)
    const buildId = str(m.buildId ?? '')
    pbf.writeMessage(PROFILE.mapping, (_: null, w) => {
      w.writeVarintField(MAPPING.id, i + 1)
      w.writeVarintField(MAPPING.memoryStart, m.start)
      w.writeVarintField(MAPPING.memoryLimit, m.end)
      w.writeVarintField(MAPPING.fileOffset, m.fileOffset)
      w.writeVarintField(MAPPING.filename, filename)
      if (m.buildId) w.writeVarintField(MAPPING.buildId, buildId)
      w.writeBooleanField(MAPPING.hasFunctions, true)
    }, null)
  })
  for (const [address, loc] of locations) {
    pbf.writeMessage(PROFILE.location, (_: null, w) => {
      w.writeVarintField(LOCATION.id, loc.id)
      if (loc.mapping) w.writeVarintField(LOCATION.mappingId, loc.mapping)
      w.writeVarintField(LOCATION.address, address)
      if (loc.fn) w.writeMessage(LOCATION.line, (fn: number, l) => l.writeVarintField(LINE.functionId, fn), loc.fn)
    }, null)
  }
  for (const f of functions.values()) {
    const name = str(f.name)
    const file = str(f.file)
    pbf.writeMessage(PROFILE.function, (_: null, w) => {
      w.writeVarintField(FUNCTION.id, f.id)
      w.writeVarintField(FUNCTION.name, name)
      w.writeVarintField(FUNCTION.systemName, name)
      w.writeVarintField(FUNCTION.filename, file)
    }, null)
  }
  valueType(PROFILE.periodType, 'space', 'bytes')
  pbf.writeVarintField(PROFILE.period, p.period)
  pbf.writeVarintField(PROFILE.comment, str("TCMalloc's sampled live objects, read by toma from a core dump"))
  // Last: every string has its index by now (a decoder reads the fields in any order).
  for (const s of strings.keys()) pbf.writeStringField(PROFILE.stringTable, s)
  return zlib.gzipSync(pbf.finish())
}
