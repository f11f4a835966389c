/**
 * Library files whose release is known by their GNU build-id (the core keeps each mapped ELF's
 * first page, so the note is there even without the file): Debian 12's gperftools 2.10-1
 * (gperftools-layouts.md §9). The build-id outranks the file name: Debian's
 * libtcmalloc_and_profiler.so.4.6.5 is 2.10, while a plain libtcmalloc.so.4.6.5 is 2.18.1.
 */
export const KNOWN_BUILDS: Record<string, {version: string; what: string}> = {
  '560cd227169ae8f93cb59e3215f4ea11c299fa69': {version: '2.10', what: 'Debian 2.10-1 libtcmalloc.so.4.5.10'},
  '39dfd4a5855703fa6c2469749282f75b18a1aa66': {version: '2.10', what: 'Debian 2.10-1 libtcmalloc_minimal.so.4.5.10'},
  '81e43ab26e797857550721760204b2ff5d4b1672': {version: '2.10', what: 'Debian 2.10-1 libtcmalloc_and_profiler.so.4.6.5'},
  'ba60db0925890b56ca68fda5414c5b06a1030895': {version: '2.10', what: 'Debian 2.10-1 libtcmalloc_debug.so.4.5.10'},
  '431b85722f5ff87f858c80e840c51f4bb2052477': {version: '2.10', what: 'Debian 2.10-1 libtcmalloc_minimal_debug.so.4.5.10'},
}
