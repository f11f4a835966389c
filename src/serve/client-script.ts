/**
 * The served pages' own script (no library, no inline script: the server sends it from
 * `SCRIPT_PATHS.serve` under `script-src 'self'`). It expands the dominator tree in place: a
 * node's button fetches its children as JSON (`/api/dominated`, dominated-rows.ts), a list's last
 * button the next page. Every byte it inserts comes as JSON and goes in as text (textContent,
 * createElement: never innerHTML), and it builds the rows the server's dominatedListHtml builds.
 */
export const SERVE_SCRIPT = `
(function () {
  'use strict';
  function num(n) { return Number(n).toLocaleString('en-US'); }
  function count(n, one, many) { return num(n) + ' ' + (n === 1 ? one : many); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function add(parent, child) { parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child); }
  function button(cls, href, text) {
    var b = el('button', cls, text);
    b.type = 'button';
    b.setAttribute('data-href', href);
    return b;
  }
  function rowItem(r) {
    var li = el('li');
    li.setAttribute('data-slot', String(r.slot));
    if (r.childrenHref) {
      var b = button('dom-expand', r.childrenHref, '+');
      b.setAttribute('aria-expanded', 'false');
      b.title = count(r.childCount, 'child', 'children');
      add(li, b);
    } else add(li, el('span', 'dom-leaf', '\\u00b7'));
    add(li, ' ');
    var a = el('a');
    a.href = r.href;
    add(a, el('code', null, r.address));
    add(li, a);
    add(li, ' ' + r.name + ' ');
    add(li, el('span', 'dim', num(r.size) + ' B'));
    add(li, ' retains ');
    add(li, el('b', null, num(r.retainedBytes) + ' B'));
    add(li, ' in ' + count(r.retainedObjects, 'object', 'objects'));
    if (r.childCount) {
      add(li, ' ');
      add(li, el('span', 'dim', '(' + count(r.childCount, 'child', 'children') + ')'));
    }
    return li;
  }
  function fill(ul, page) {
    if (page.note) add(ul, el('li', 'dim dom-note', page.note));
    page.rows.forEach(function (r) { add(ul, rowItem(r)); });
    if (page.next) {
      var line = el('li', 'dom-more-line');
      add(line, button('dom-more', page.next, page.nextLabel));
      add(ul, line);
    }
  }
  function load(b, done) {
    b.disabled = true;
    fetch(b.getAttribute('data-href'), {credentials: 'same-origin', headers: {Accept: 'application/json'}})
      .then(function (r) {
        if (!r.ok) throw new Error('the server answered ' + r.status);
        return r.json();
      })
      .then(function (page) {
        b.disabled = false;
        done(page);
      })
      .catch(function (e) {
        b.disabled = false;
        var note = el('span', 'bad dom-error', ' ' + e.message);
        b.parentNode.insertBefore(note, b.nextSibling);
      });
  }
  function toggle(b) {
    var li = b.parentNode;
    var sub = li.querySelector(':scope > ul.domtree');
    var open = b.getAttribute('aria-expanded') === 'true';
    if (sub) {
      sub.hidden = open;
      b.setAttribute('aria-expanded', open ? 'false' : 'true');
      b.textContent = open ? '+' : '\\u2212';
      return;
    }
    load(b, function (page) {
      var ul = el('ul', 'domtree');
      fill(ul, page);
      add(li, ul);
      b.setAttribute('aria-expanded', 'true');
      b.textContent = '\\u2212';
    });
  }
  function more(b) {
    var line = b.parentNode;
    var ul = line.parentNode;
    load(b, function (page) {
      ul.removeChild(line);
      fill(ul, page);
    });
  }
  document.addEventListener('click', function (ev) {
    var t = ev.target;
    if (!(t instanceof Element)) return;
    var b = t.closest('button.dom-expand, button.dom-more');
    if (!b || b.disabled) return;
    if (b.classList.contains('dom-expand')) toggle(b);
    else more(b);
  });
})();
`
