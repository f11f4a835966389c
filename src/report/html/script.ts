import {createHash} from 'node:crypto'

/**
 * The page's only script (inline, no library): sorting a table by a clicked header, and filtering
 * a table's rows by the text typed in its filter box. Numeric columns sort by each cell's data-v
 * (the exact number), largest first on the first click; text columns alphabetically.
 */
export const PAGE_SCRIPT = `
(function () {
  'use strict';
  function cellValue(row, col, numeric) {
    var c = row.cells[col];
    if (!c) return numeric ? -Infinity : '';
    if (numeric) {
      var v = parseFloat(c.getAttribute('data-v'));
      return isNaN(v) ? -Infinity : v;
    }
    return c.textContent.toLowerCase();
  }
  function sortBy(table, th) {
    var col = Number(th.getAttribute('data-col'));
    var numeric = th.hasAttribute('data-numeric');
    var current = th.getAttribute('aria-sort');
    var descending = current ? current === 'ascending' : numeric;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, col, numeric), y = cellValue(b, col, numeric);
      var d = x < y ? -1 : x > y ? 1 : 0;
      return descending ? -d : d;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
  }
  function filter(input) {
    var id = input.getAttribute('data-table');
    var table = document.getElementById(id);
    if (!table) return;
    var q = input.value.trim().toLowerCase();
    var shown = 0;
    Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
      var hit = q === '' || r.textContent.toLowerCase().indexOf(q) >= 0;
      r.hidden = !hit;
      if (hit) shown++;
    });
    var count = document.querySelector('.shown[data-table="' + id + '"]');
    if (count) count.textContent = shown.toLocaleString('en-US') + (shown === 1 ? ' row' : ' rows');
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.addEventListener('click', function () { sortBy(table, th); });
    });
  });
  document.querySelectorAll('input.filter').forEach(function (input) {
    input.addEventListener('input', function () { filter(input); });
  });
})();
`

/** The CSP source that allows this script and no other: `'sha256-…'` of its text exactly as the page holds it. */
export const PAGE_SCRIPT_SOURCE = `'sha256-${createHash('sha256').update(PAGE_SCRIPT, 'utf8').digest('base64')}'`
