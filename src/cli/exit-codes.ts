/**
 * toma's exit codes (README.md, "Exit codes"): 0 the answer, 2 bad input or usage (TomaError's
 * default, oclif's parse errors), 3 `--strict` and the analysis had warnings or an unequal
 * cross-check figure (the output is complete all the same), 70 an internal error (a bug in toma).
 */
export const EXIT_OK = 0
export const EXIT_BAD_INPUT = 2
export const EXIT_STRICT_WARNINGS = 3
export const EXIT_INTERNAL = 70
