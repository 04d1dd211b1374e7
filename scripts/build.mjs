#!/usr/bin/env node
import { readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
// Bundles each entry point of the daemon package into one ESM file in packages/assistant/dist/ with esbuild, and
// builds the web UI the daemon serves (buildWeb.mjs).
// Why: loading ~100 TypeScript and dependency files through Node's type stripping and resolver takes ~2x the
// start-up time of a bare Fastify server; one pre-stripped, tree-shaken file starts faster than the bare server.
// The bin launchers run the bundle when it is newer than every source file, else the sources directly.
// Native and lazily loaded heavy modules stay external.
// `--graph <file>` writes only what each output file would hold and import (esbuild's metafile outputs) to <file>,
// without touching dist/: test/scripts/bundleGraph.test.ts keeps heavy modules off the start-up path with it.
import { build } from "esbuild";
import { buildWeb } from "./buildWeb.mjs";
import { root } from "./toolchain.mjs";

const graphIndex = process.argv.indexOf("--graph");
const graphFile = graphIndex > 0 ? process.argv[graphIndex + 1] : undefined;

const pkg = join(root, "packages", "assistant");
const dist = join(pkg, "dist");
const src = (path) => join(pkg, "src", path);

// `z.locales` re-exports zod's ~70 message translations (~400 KB, half of zod); the assistant words its errors
// in English only (zod registers `en` itself), so the bundle keeps just that one and starts faster.
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";',
      loader: "js",
    }));
  },
};

// The daemon is bundled on its own: built with the CLI, what both load would be split into ~50 shared chunks, each
// one more file for Node to resolve, read and link at every start. Alone it loads 6 files. `assistant start
// --foreground` imports the daemon's own build (dist/foreground.mjs) instead of a copy in the CLI's chunks.
const foregroundFromDaemonBuild = {
  name: "foreground-from-daemon-build",
  setup(b) {
    b.onResolve({ filter: /^\.\.\/daemon\/foreground\.ts$/ }, (args) =>
      args.importer === src("cli/daemon.ts") ? { path: "../foreground.mjs", external: true } : undefined,
    );
  },
};

const common = {
  absWorkingDir: root,
  outdir: dist,
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
  metafile: true,
  legalComments: "none",
  logLevel: "warning",
};
const builds = [
  { entryPoints: { assistant: src("bin/assistant.ts") }, plugins: [zodEnglishOnly, foregroundFromDaemonBuild] },
  {
    entryPoints: { "assistant-daemon": src("bin/assistant-daemon.ts"), foreground: src("daemon/foreground.ts") },
    plugins: [zodEnglishOnly],
  },
  // ~50 KB that `assistant start` waits for before its daemon is spawned: one file, nothing to split.
  { entryPoints: { "assistant-supervisor": src("bin/assistant-supervisor.ts") }, splitting: false },
];

const started = Date.now();
const web = graphFile ? undefined : buildWeb();
const results = await Promise.all(builds.map((options) => build({ ...common, ...options, write: !graphFile })));
if (graphFile) {
  writeFileSync(graphFile, `${JSON.stringify(Object.assign({}, ...results.map((r) => r.metafile.outputs)))}\n`);
  process.exit(0);
}
const entries = builds.flatMap((options) => Object.keys(options.entryPoints));

// Chunk names carry a content hash, so every change leaves the previous chunks behind (and their entries in the
// compile cache the bins keep in dist/.compile-cache). Remove the chunks this build did not write, and cache
// entries, once they are a day old: a process started from an earlier build still loads its lazy chunks.
const STALE_AFTER_MS = 24 * 60 * 60 * 1000;
const written = new Set(
  results.flatMap((result) => Object.keys(result.metafile.outputs).map((file) => join(root, file))),
);
let removed = 0;
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  const file = join(entry.parentPath, entry.name);
  const cached = relative(dist, file).startsWith(".compile-cache");
  if (!entry.isFile() || !(cached || relative(dist, file).startsWith("chunks")) || written.has(file)) continue;
  if (Date.now() - statSync(file).mtimeMs < STALE_AFTER_MS) continue;
  rmSync(file, { force: true });
  if (!cached) removed++;
}
console.log(
  `build: bundled ${entries.join(", ")} into ${relative(root, dist)} (${Date.now() - started} ms` +
    `${removed ? `; removed ${removed} stale chunks` : ""})`,
);
console.log(`build: ${await web}`);
