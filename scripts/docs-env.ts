// `npm run docs:env`: rewrites the variables tables of docs/configuration.md from the settings registry
// (packages/assistant/src/config/envVariables.ts). test/config/envDocs.test.ts fails while the page is stale.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { replaceGeneratedBlock } from "../packages/assistant/src/config/envDocs.ts";

const file = join(import.meta.dirname, "..", "docs", "configuration.md");
const before = readFileSync(file, "utf8");
const after = replaceGeneratedBlock(before);
if (after !== before) writeFileSync(file, after);
console.log(after === before ? "docs/configuration.md is up to date" : "docs/configuration.md: variables updated");
