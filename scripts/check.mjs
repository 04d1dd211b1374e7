#!/usr/bin/env node
// Static checks run before the tests: types (tsc --noEmit), lint and format (biome), dependency direction
// (dependency-cruiser). Run with the project's Node 22 (npm run check).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { root } from "./toolchain.mjs";

const bin = (name) => join(root, "node_modules", ".bin", name);
const steps = [
  ["types", bin("tsc"), ["--noEmit", "-p", "tsconfig.json"]],
  ["lint", bin("biome"), ["check", "--error-on-warnings", "."]],
  ["dependencies", bin("depcruise"), ["--config", ".dependency-cruiser.cjs", "packages"]],
];
for (const [name, cmd, args] of steps) {
  const started = Date.now();
  const result = spawnSync(cmd, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`check: ${name} failed. Fix the problems above (\`npm run lint:fix\` mends formatting).`);
    process.exit(1);
  }
  console.log(`check: ${name} ok (${Date.now() - started} ms)`);
}
