import {grouped} from '../util/grouped.js'

// How an object without a type is named, in the text, the HTML report and in the labels the
// analyses hand them (an accumulation point's groups): the same block named the same way everywhere.

/**
 * A group of untyped objects of one size (an accumulation point's tally), named as untypedKind
 * names each of its objects: its size class when the size is a class's (TCMalloc serves every
 * size up to its largest class from one), else large blocks of that size.
 */
export function untypedGroup(size: number, classSizes: readonly number[]): string {
  const cl = classSizes.indexOf(size, 1)
  return cl > 0 ? untypedKind({sizeClass: cl}) : `(untyped, large, ${grouped(size)} B each)`
}

/** What an object is when it has no type: which kind of untyped block. */
export function untypedKind(o: {sizeClass: number}): string {
  return o.sizeClass ? `(untyped, class ${o.sizeClass})` : '(untyped, large)'
}
