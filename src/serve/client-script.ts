/**
 * The served pages' own script (no library, no inline script: the server sends it from
 * `SCRIPT_PATHS.serve` under `script-src 'self'`). Filled in by the pages that need it (the
 * dominator tree's lazy expansion); every byte it inserts comes as JSON and goes in as text.
 */
export const SERVE_SCRIPT = `
(function () {
  'use strict';
})();
`
