// node render.js MODEL.json OUT.svg: the graph view's picture as SVG, laid
// out by the same code and ELK as the webview (tosa-lsp graph --format=svg
// runs it with copies of these files).
'use strict';
const fs = require('fs');
const path = require('path');
// Beside it when tosa-lsp writes it out; in vendor/ in the source tree.
const elkPath = ['elk.bundled.js', 'vendor/elk.bundled.js'].map(f => path.join(__dirname, f)).find(f => fs.existsSync(f));
const ELK = require(elkPath);
const TosaGraph = require(path.join(__dirname, 'graph-view.js'));

const [modelPath, outPath] = process.argv.slice(2);
if (!modelPath || !outPath) {
  console.error('usage: node render.js MODEL.json OUT.svg');
  process.exit(2);
}
TosaGraph.renderSVG(JSON.parse(fs.readFileSync(modelPath, 'utf8')), new ELK())
  .then(svg => fs.writeFileSync(outPath, svg))
  .catch(e => {
    console.error(e && e.message ? e.message : String(e));
    process.exit(1);
  });
