#!/usr/bin/env node
// Static checks run before the tests: types (tsc --noEmit, the web UI with its own settings), lint and format (biome), dependency direction
// (dependency-cruiser), module READMEs and document references (checkDocs.mjs). Run with the project's Node 22
// (npm run check).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { root } from "./toolchain.mjs";

const bin = (name) => join(root, "node_modules", ".bin", name);
const steps = [
  ["types", bin("tsc"), ["--noEmit", "-p", "tsconfig.json"]],
  // The web UI runs in a browser (DOM types, JSX): its own settings.
  ["types (web UI)", bin("tsc"), ["--noEmit", "-p", join("packages", "web", "tsconfig.json")]],
  ["lint", bin("biome"), ["check", "--error-on-warnings", "."]],
  ["dependencies", bin("depcruise"), ["--config", ".dependency-cruiser.cjs", "packages"]],
  ["docs", process.execPath, [join(root, "scripts", "checkDocs.mjs")]],
];
for (const [name, cmd, args] of steps) {
  const started = Date.now();
  const result = spawnSync(cmd, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    const hint = name === "lint" ? " (`npm run lint:fix` mends formatting)" : "";
    console.error(`check: ${name} failed. Fix the problems above${hint}.`);
    process.exit(1);
  }
  console.log(`check: ${name} ok (${Date.now() - started} ms)`);
}
