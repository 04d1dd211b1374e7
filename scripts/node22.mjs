#!/usr/bin/env node
// Runs a script with the project's Node 22 (see toolchain.mjs): `node scripts/node22.mjs <file> [args...]`.
import { spawn } from "node:child_process";
import { envFor, node22 } from "./toolchain.mjs";

const node = node22();
if (!node) {
  console.error(
    "Node.js 22.18+ is not installed for this project yet. Run `npm start` or `node scripts/bootstrap.mjs` first.",
  );
  process.exit(1);
}
const child = spawn(node, process.argv.slice(2), { stdio: "inherit", env: envFor(node) });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});
