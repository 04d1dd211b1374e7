// Finds the Node.js >= 22.18 the project runs on: the current one when it is new enough, else the one
// pinned in toolchain/ (installed from the npm registry by bootstrap.mjs). Plain JavaScript on purpose:
// it must run on the older Node that a fresh machine may have.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const toolchainDir = join(root, "toolchain");
const MIN = [22, 18];

export function isModern(version = process.versions.node) {
  const [major, minor] = version.split(".").map(Number);
  return major > MIN[0] || (major === MIN[0] && minor >= MIN[1]);
}

const win = process.platform === "win32";
const pinnedNode = join(toolchainDir, "node_modules", "node", "bin", win ? "node.exe" : "node");
// The node package installs its platform archive (binary and C headers) as a nested dependency.
const pinnedHeaders = join(
  toolchainDir,
  "node_modules",
  "node",
  "node_modules",
  `node-${process.platform}-${process.arch}`,
);

/** The node executable to run the project with, or null when the toolchain still has to be installed. */
export function node22() {
  if (isModern()) return process.execPath;
  return existsSync(pinnedNode) ? pinnedNode : null;
}

/** Environment for child processes: node22 first on PATH; native addons built against its headers. */
export function envFor(nodePath) {
  const env = { ...process.env };
  const key = Object.keys(env).find((k) => k.toUpperCase() === "PATH") ?? "PATH";
  const sep = win ? ";" : ":";
  env[key] = [dirname(nodePath), join(root, "node_modules", ".bin"), env[key]].join(sep);
  if (nodePath === pinnedNode && existsSync(join(pinnedHeaders, "include", "node"))) {
    env.npm_config_nodedir = pinnedHeaders;
  }
  return env;
}
