/**
 * `analyze --strict` exits with this code when the analysis had a warning or an unequal
 * cross-check figure (the output is complete all the same). The others (README.md, "Exit codes"):
 * 0 the answer, 2 bad input or usage (TomaError's default, oclif's parse errors), 70 an internal
 * error (base-command.ts).
 */
export const EXIT_STRICT_WARNINGS = 3
