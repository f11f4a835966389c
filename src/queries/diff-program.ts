import type {Program} from '../program/program.js'

/**
 * Why two cores are not of one program (their executables' GNU build-ids differ, as the cores
 * themselves record them), or null. Without a build-id in either core, the executables' paths
 * must agree; `unchecked` then says the identity rests on the path alone.
 */
export function programMismatch(before: Program, after: Program): {problem: string | null; unchecked: string | null} {
  const a = before.executable?.module
  const b = after.executable?.module
  if (!a || !b) return {problem: null, unchecked: 'no executable found in one of the cores: not checked that they are of one program'}
  if (a.buildId && b.buildId) {
    return {problem: a.buildId === b.buildId ? null : `${before.coreFile} and ${after.coreFile} are cores of different programs (${a.path} build-id ${a.buildId}, ${b.path} build-id ${b.buildId}); diff compares two cores of one program`, unchecked: null}
  }
  if (a.path !== b.path) return {problem: `${before.coreFile} and ${after.coreFile} are cores of different programs (${a.path}, ${b.path}); diff compares two cores of one program`, unchecked: null}
  return {problem: null, unchecked: `no build-id of ${a.path} in one of the cores: same program assumed from its path`}
}
