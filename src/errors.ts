/**
 * An error the user caused or can act on (bad input file, mismatched library, damaged structure
 * that stops analysis). Commands print its message as one line on stderr and exit non-zero;
 * anything else escaping is a bug in toma.
 */
export class TomaError extends Error {
  constructor(message: string, readonly exitCode = 2) {
    super(message)
    this.name = 'TomaError'
  }
}

/** Formats an address the way every toma output does: lowercase hex with 0x. */
export function hex(value: number | bigint): string {
  return '0x' + value.toString(16)
}

/**
 * An output could not be written (a full disk, a folder that is not there): sysexits' EX_IOERR.
 * Here, beside TomaError, for every layer that writes (cli/exit-codes.ts lists all the codes).
 */
export const EXIT_OUTPUT_FAILED = 74
