// Shared by the bin launchers. Runs an entry point on Node >= 22.18: the esbuild bundle in dist/ when it is newer
// than every source file (fast start), else the TypeScript source through Node's type stripping. On an older Node
// it re-executes with the project's pinned Node 22 (toolchain/, installed by `npm start` or `npm test`).
import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, "..");
const sourceDirs = [join(pkg, "src"), join(pkg, "..", "client", "src")];

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function entryFor(name) {
  const bundle = join(pkg, "dist", `${name}.mjs`);
  if (existsSync(bundle)) {
    const built = statSync(bundle).mtimeMs;
    if (sourceDirs.every((dir) => !existsSync(dir) || newestMtime(dir) <= built)) return bundle;
  }
  return join(pkg, "src", "bin", `${name}.ts`);
}

export async function launch(name) {
  const target = entryFor(name);
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major > 22 || (major === 22 && minor >= 18)) {
    await import(pathToFileURL(target).href);
    return;
  }
  const pinned = join(pkg, "..", "..", "toolchain", "node_modules", "node", "bin", "node");
  if (!existsSync(pinned)) {
    console.error(
      `assistant needs Node.js 22.18 or newer (this is ${process.version}). Run \`npm start\` in the project folder to install it.`,
    );
    process.exit(1);
  }
  const child = spawn(pinned, [target, ...process.argv.slice(2)], { stdio: "inherit" });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => (signal ? process.kill(process.pid, signal) : process.exit(code ?? 1)));
}
