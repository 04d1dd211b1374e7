#!/usr/bin/env node
import { join } from "node:path";
// Bundles each entry point of the daemon package into one ESM file in packages/assistant/dist/ with esbuild.
// Why: loading ~100 TypeScript and dependency files through Node's type stripping and resolver takes ~2x the
// start-up time of a bare Fastify server; one pre-stripped, tree-shaken file starts faster than the bare server.
// The bin launchers run the bundle when it is newer than every source file, else the sources directly.
// Native and lazily loaded heavy modules stay external.
import { build } from "esbuild";
import { root } from "./toolchain.mjs";

const pkg = join(root, "packages", "assistant");
const entries = ["assistant", "assistant-daemon", "assistant-supervisor"];
const started = Date.now();
await build({
  entryPoints: Object.fromEntries(entries.map((name) => [name, join(pkg, "src", "bin", `${name}.ts`)])),
  outdir: join(pkg, "dist"),
  outExtension: { ".js": ".mjs" },
  bundle: true,
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node22",
  external: ["better-sqlite3", "@napi-rs/keyring", "node-llama-cpp", "@node-llama-cpp/*"],
  chunkNames: "chunks/[name]-[hash]",
  // Bundled CommonJS dependencies call require(); give the ESM output one.
  banner: {
    js: "import { createRequire as __assistantRequire } from 'node:module'; const require = __assistantRequire(import.meta.url);",
  },
  legalComments: "none",
  logLevel: "warning",
});
console.log(`build: bundled ${entries.join(", ")} into packages/assistant/dist (${Date.now() - started} ms)`);
