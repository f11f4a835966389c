import * as Flags from '../src/cli/flags.js'
import {leaksWithPublicIds} from '../src/queries/leaks.js'
import {leakKinds} from '../src/report/held-memory-text.js'
import {storedSightings} from '../src/index/sighting-index.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {aboutCore, bytes, heading, table} from '../src/report/table.js'
import {ALLOCATOR_OWN_EXAMPLES, count, sightingText, withCut} from '../src/report/wording.js'
import type {HeapDamage} from '../src/queries/heap-damage.js'

export default class Leaks extends TomaCommand {
  static override description = 'Live objects that no root (register, stack, TLS, global, mapping, cached stack) reaches, directly or through other objects'
  static override args = queryCoreArgs
  static override flags = {...indexFlags, limit: Flags.integer({description: 'list at most this many objects, largest first (0: all)', default: 50, min: 0})}

  async run() {
    const {args, flags} = await this.parse(Leaks)
    const {index, corePath, program} = await openIndex(args.core, flags, note)
    const leaks = leaksWithPublicIds(index, flags.limit === 0 ? Infinity : flags.limit, storedSightings(index), program())
    // Free objects behind a damaged free list that their links do not tell are counted live: nothing
    // may point to them, so some leaks may be free objects. Said, never left silent.
    const unknown = (index.meta.summary as unknown as {damage?: HeapDamage}).damage?.unknownBehindDamage
    const damageNote = unknown && unknown.objects > 0 ? `${count(unknown.objects, 'free object')} (${bytes(unknown.bytes)}) behind damaged free lists are counted live (toma damage): nothing points to a free object, so some of the leaks below may be those free objects` : null
    if (!this.jsonEnabled()) {
      if (damageNote) note(damageNote)
      this.log(aboutCore(corePath))
      this.log(`${count(leaks.objects, 'live object')} (${bytes(leaks.bytes)}) ${leaks.objects === 1 ? 'is' : 'are'} reachable from no root`)
      const own = leaks.allocatorInternal
      if (own.objects > 0) this.log(`(not counted: ${count(own.objects, 'unreferenced allocation')} of TCMalloc itself, ${bytes(own.bytes)}, ${ALLOCATOR_OWN_EXAMPLES})`)
      if (leaks.objects > 0) {
        this.log('', heading(`Where leaked structures start (${leaks.starts.length < leaks.startCount ? `first ${leaks.starts.length} of ` : ''}${leaks.startCount}: nothing else leaked points to them), largest retained first`))
        this.log(
          table(
            ['address', 'type', '#size', '#retained', '#objects'],
            leaks.starts.map(o => [o.address, o.type ?? '(untyped)', o.size, o.retainedBytes, o.retainedObjects]),
          ),
        )
        const leads = [...leaks.starts, ...leaks.largest].filter((o, i, all) => o.lastSeen.length > 0 && all.findIndex(x => x.address === o.address) === i)
        if (leads.length) {
          this.log('', heading('Leads: leaked objects a returned call\'s frame still points at'))
          for (const o of leads) for (const x of o.lastSeen) this.log(`${o.address} ${o.type ?? '(untyped)'}: ${sightingText(x)}`)
        }
        this.log('', heading(leaks.untypedGroups.length ? 'By type, and untyped blocks by size and holder' : 'By type'))
        this.log(table(['#objects', '#bytes', 'type'], leakKinds(leaks).map(k => [k.objects, k.bytes, k.kind])))
        // The largest leaked objects that the starts above do not list already (a leak of single
        // blocks is all starts: the list would repeat them).
        const listed = new Set(leaks.starts.map(o => o.address))
        const more = leaks.largest.filter(o => !listed.has(o.address))
        if (more.length) {
          this.log('', heading(withCut(`Largest ${more.length === 1 ? 'leaked object' : `${more.length} leaked objects`} not listed above`, more.length, leaks.objects - leaks.starts.length)))
          this.log(
            table(
              ['address', '#id', '#size', '#pointed to by', '#points to', 'type'],
              more.map(o => [o.address, o.id, o.size, o.pointedToBy, o.pointsTo, o.type ?? '(untyped)']),
            ),
          )
        }
      }
    }
    return {core: corePath, ...leaks, ...(damageNote ? {damageNote} : {})}
  }
}
