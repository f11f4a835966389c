import {expect, it} from 'vitest'
import {withoutVersion} from '../../src/elf/symbol-version.js'

// gdb names a function without its symbol version, and a PLT stub with its `@plt` (gdb's `exp@plt`).
it('a symbol\'s version is cut, a PLT stub\'s @plt kept', () => {
  expect(withoutVersion('pthread_cond_wait@@GLIBC_2.3.2')).toBe('pthread_cond_wait')
  expect(withoutVersion('memcpy@GLIBC_2.2.5')).toBe('memcpy')
  expect(withoutVersion('exp@plt')).toBe('exp@plt')
  expect(withoutVersion('_ZN8tcmalloc15CentralFreeList14ReleaseToSpansEPv@plt')).toBe('_ZN8tcmalloc15CentralFreeList14ReleaseToSpansEPv@plt')
  expect(withoutVersion('malloc')).toBe('malloc')
})
