#!/usr/bin/env node
// Runs a script with the project's Node 22 (see toolchain.mjs): `node scripts/node22.mjs <file> [args...]`.
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { envFor, node22 } from "./toolchain.mjs";

const node = node22();
if (!node) {
  console.error(
    "Node.js 22.18+ is not installed for this project yet. Run `npm start` or `node scripts/bootstrap.mjs` first.",
  );
  process.exit(1);
}
const script = process.argv[2];
if (node === process.execPath && script && !script.startsWith("-")) {
  // Already on Node 22: run the script in this process, as `node <file>` would (a second Node start-up is ~40 ms
  // of every `npm run assistant -- start`).
  Object.assign(process.env, envFor(node));
  process.argv.splice(1, 2, resolve(script));
  await import(pathToFileURL(resolve(script)).href);
} else {
  const child = spawn(node, process.argv.slice(2), { stdio: "inherit", env: envFor(node) });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}
