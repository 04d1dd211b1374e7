// Shared by the bin launchers: runs a TypeScript entry point on Node >= 22.18 (type stripping). On an older
// Node it re-executes with the project's pinned Node 22 (toolchain/, installed by `npm start`/`npm test`).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

export async function launch(entry) {
  const target = join(here, "..", "src", "bin", entry);
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major > 22 || (major === 22 && minor >= 18)) {
    await import(pathToFileURL(target).href);
    return;
  }
  const pinned = join(here, "..", "..", "..", "toolchain", "node_modules", "node", "bin", "node");
  if (!existsSync(pinned)) {
    console.error(`assistant needs Node.js 22.18 or newer (this is ${process.version}). Run \`npm start\` in the project folder to install it.`);
    process.exit(1);
  }
  const child = spawn(pinned, [target, ...process.argv.slice(2)], { stdio: "inherit" });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => (signal ? process.kill(process.pid, signal) : process.exit(code ?? 1)));
}
