import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// What each way of starting the daemon loads before it answers, read from the bundle scripts/build.mjs makes of
// the current sources (`--graph`: esbuild's metafile, dist/ untouched). Start-up time is measured by
// bench/startup; this keeps its causes from coming back cheaply: command areas the command line does not name,
// modules only a later request needs, extra files to resolve, an ESM import of node:http (it loads undici).

interface Output {
  imports: Array<{ path: string; kind: string; external?: boolean }>;
  inputs: Record<string, unknown>;
}

const root = resolve(import.meta.dirname, "..", "..", "..", "..");
const dist = "packages/assistant/dist";
let dir: string;
let outputs: Record<string, Output>;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "assistant-graph-"));
  const file = join(dir, "graph.json");
  const run = spawnSync(process.execPath, [join(root, "scripts", "build.mjs"), "--graph", file], { encoding: "utf8" });
  expect(run.status, run.stderr).toBe(0);
  outputs = JSON.parse(readFileSync(file, "utf8"));
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The output file holding `source` (a path under packages/). */
function outputOf(source: string): string {
  const found = Object.keys(outputs).filter((out) => `packages/${source}` in outputs[out]!.inputs);
  expect(found, `${source} is bundled in exactly one file`).toHaveLength(1);
  return found[0]!;
}

/** The files Node loads for `start` (static imports), and the source modules and externals they hold. */
function loadedBy(...starts: string[]) {
  const files = new Set<string>();
  const pending = [...starts];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const i of outputs[file]!.imports) if (i.kind === "import-statement" && !i.external) pending.push(i.path);
  }
  const modules = [...files].flatMap((file) => Object.keys(outputs[file]!.inputs));
  const esmBuiltins = [...files].flatMap((file) =>
    outputs[file]!.imports.filter((i) => i.external && i.kind === "import-statement").map((i) => i.path),
  );
  return { files, modules, esmBuiltins };
}

describe("the start-up path of the bundle", () => {
  it("`assistant start --foreground` loads the CLI, its daemon commands and the daemon's own build, nothing else", () => {
    const cli = loadedBy(`${dist}/assistant.mjs`, outputOf("assistant/src/cli/program.ts"));
    const commands = loadedBy(outputOf("assistant/src/cli/daemon.ts"));
    const loaded = [...cli.modules, ...commands.modules];
    expect(new Set(loaded.filter((m) => m.startsWith("packages/assistant/src/cli/")))).toEqual(
      new Set(["program.ts", "context.ts", "daemon.ts"].map((file) => `packages/assistant/src/cli/${file}`)),
    );
    expect(loaded.filter((m) => m.includes("node_modules/")).every((m) => m.includes("node_modules/commander/"))).toBe(
      true,
    );
    // The daemon itself comes from its own build, the one `assistant-daemon` runs (a path relative to dist/chunks/).
    expect(outputOf("assistant/src/cli/daemon.ts").startsWith(`${dist}/chunks/`)).toBe(true);
    const daemonImport = outputs[outputOf("assistant/src/cli/daemon.ts")]!.imports.find((i) =>
      i.path.endsWith("foreground.mjs"),
    );
    expect(daemonImport).toEqual({ path: "../foreground.mjs", kind: "dynamic-import", external: true });
    expect(outputs[`${dist}/foreground.mjs`]).toBeDefined();
  });

  it("the daemon loads a handful of files, without what only a later request needs", () => {
    const daemon = loadedBy(`${dist}/assistant-daemon.mjs`, `${dist}/foreground.mjs`);
    expect(daemon.files.size).toBeLessThanOrEqual(8);
    const packages = new Set(daemon.modules.map((m) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(m)?.[1]));
    for (const lazy of ["@extism/extism", "@ai-sdk/azure", "@ai-sdk/openai", "linkedom", "commander"]) {
      expect(packages).not.toContain(lazy);
    }
    expect(daemon.modules.filter((m) => m.includes("zod/v4/locales/"))).toEqual([
      "node_modules/zod/v4/locales/index.js",
      "node_modules/zod/v4/locales/en.js",
    ]);
    expect(daemon.modules.some((m) => m.startsWith("packages/assistant/src/cli/"))).toBe(false);
    // An ESM import of node:http fills its lazy exports, which loads fetch's undici: ~30 ms of every start.
    expect(daemon.esmBuiltins).not.toContain("node:http");
    expect(daemon.esmBuiltins).not.toContain("node:https");
  });

  it("the supervisor `assistant start` spawns is one file", () => {
    expect(loadedBy(`${dist}/assistant-supervisor.mjs`).files.size).toBe(1);
    expect(outputs[`${dist}/assistant-supervisor.mjs`]!.imports.some((i) => !i.external)).toBe(false);
  });
});
