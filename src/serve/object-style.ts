/** What the object and dominator pages add to the styles: the hex dump, the tree's rows and buttons. */
export const OBJECT_STYLE = `
pre.hexdump { font: 12.5px/1.35 ui-monospace, Menlo, Consolas, monospace; background: var(--head); padding: 8px 12px; overflow-x: auto; }
pre.hexdump a { color: #1f5fa8; text-decoration: none; background: #e3ecf7; }
ul.domtree { list-style: none; padding-left: 22px; margin: 2px 0; }
ul.domtree li { margin: 2px 0; }
button.dom-expand { width: 22px; padding: 0; font: 13px ui-monospace, monospace; cursor: pointer; }
span.dom-leaf { display: inline-block; width: 22px; text-align: center; color: var(--dim); }
button.dom-more { font: inherit; cursor: pointer; }
ol.stack { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12.5px; }
`
