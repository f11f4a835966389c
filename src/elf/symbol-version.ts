/** What follows a PLT stub's symbol name (ElfFile.pltStubAt): part of its name, as gdb shows it. */
export const PLT_SUFFIX = '@plt'

/**
 * A symbol's name without its version, as gdb names a function: `pthread_cond_wait@@GLIBC_2.3.2`
 * (a debug file's .symtab spells versions so) → `pthread_cond_wait`; a PLT stub's `name@plt`
 * is kept whole.
 */
export function withoutVersion(name: string): string {
  return name.endsWith(PLT_SUFFIX) ? name : name.replace(/@@?[^@]*$/, '')
}
