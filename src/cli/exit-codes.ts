/**
 * `analyze --strict` exits with this code when the analysis had a warning or an unequal
 * cross-check figure (the output is complete all the same). The others (README.md, "Exit codes"):
 * 0 the answer, 1 `profile` found no sampled objects, 2 bad input or usage (TomaError's default,
 * oclif's parse errors), 70 an internal error (base-command.ts).
 */
export const EXIT_STRICT_WARNINGS = 3

/** `profile` on a core without sampled objects: nothing to write (not bad input, not an answer either). */
export const EXIT_NO_SAMPLES = 1

/** Bad input or usage: TomaError's default, oclif's parse errors, an unknown command. */
export const EXIT_USAGE = 2

/** An output could not be written (errors.ts): nothing partial is left. */
export {EXIT_OUTPUT_FAILED} from '../errors.js'
