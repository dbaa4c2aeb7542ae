// Parses Mermaid files with Mermaid's own parser (the one its renderer
// uses), for tests/it/diagram.rs.
//
//   node tests/mermaid_parse.mjs CLIENTS_DIR FILE...
//
// CLIENTS_DIR holds node_modules with mermaid and jsdom (installed by
// scripts/install-test-clients.sh). Prints one line per file, `ok FILE
// TYPE` or `FAIL FILE: message`; exits 1 when any file fails to parse.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir, ...files] = process.argv.slice(2);
const require = createRequire(join(dir, 'package.json'));
// Mermaid sanitises labels with DOMPurify, which needs a window.
const { JSDOM } = require('jsdom');
const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const mermaid = (await import(pathToFileURL(require.resolve('mermaid')).href)).default;
mermaid.initialize({ startOnLoad: false });

let failed = 0;
for (const file of files) {
  try {
    const result = await mermaid.parse(readFileSync(file, 'utf8'));
    console.log(`ok ${file} ${result.diagramType}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${file}: ${String(e?.message ?? e).split('\n').join(' | ')}`);
  }
}
process.exit(failed ? 1 : 0);
