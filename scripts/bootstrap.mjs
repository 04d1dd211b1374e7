#!/usr/bin/env node
// Installs what the project needs on a fresh machine, idempotently and quickly when nothing changed:
// 1. Node 22 from the npm registry into toolchain/ when the machine's Node is older than 22.18;
// 2. with --test, the system packages some tests need (a Secret Service for the vault's keyring tests, bubblewrap for
//    the command sandbox, Chromium for the web UI's browser tests) through apt-get where it is available;
// 3. the workspace dependencies, installed by that Node so native addons match its ABI. `npm install` rather than
//    `npm ci`: registries that lack some other platform's optional binaries (e.g. Biome for win32) make the
//    lockfile omit them, which `npm ci` rejects while `npm install` installs exactly the locked tree. `--no-save`:
//    it never writes package-lock.json, whose details vary with the machine (this platform's optional binaries,
//    install-script flags), so a fresh clone stays clean; adding a dependency is `npm install <name>`, as usual.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { envFor, isModern, node22, root, toolchainDir } from "./toolchain.mjs";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const quiet = ["--no-audit", "--no-fund", "--loglevel=error"];

function run(args, options) {
  const result = spawnSync(npm, args, { stdio: "inherit", shell: process.platform === "win32", ...options });
  if (result.status !== 0) {
    console.error(`\nbootstrap: \`npm ${args.join(" ")}\` failed (exit ${result.status ?? result.signal}).`);
    process.exit(result.status || 1);
  }
}

function digest(file) {
  return existsSync(file) ? createHash("sha256").update(readFileSync(file)).digest("hex") : "none";
}

// Re-run an install step only when its lockfile changed since it last succeeded.
function upToDate(stampFile, hash) {
  return existsSync(stampFile) && readFileSync(stampFile, "utf8") === hash;
}

if (!isModern()) {
  const stamp = join(toolchainDir, "node_modules", ".bootstrap-stamp");
  const hash = digest(join(toolchainDir, "package-lock.json"));
  if (!node22() || !upToDate(stamp, hash)) {
    console.log(`bootstrap: Node ${process.versions.node} is older than 22.18; installing Node 22 into toolchain/ ...`);
    run(["ci", ...quiet], { cwd: toolchainDir });
    writeFileSync(stamp, hash);
  }
}

const node = node22();
const stamp = join(root, "node_modules", ".bootstrap-stamp");
const lockState = () => `${digest(join(root, "package-lock.json"))}:${digest(join(root, "package.json"))}:${node}`;
if (!existsSync(join(root, "node_modules")) || !upToDate(stamp, lockState())) {
  console.log("bootstrap: installing dependencies ...");
  run(["install", "--no-save", ...quiet], { cwd: root, env: envFor(node) });
  writeFileSync(stamp, lockState());
}

// System packages the test suite needs, by the command that proves each is there: a Secret Service for the vault's
// keyring tests, bubblewrap for run_command's sandbox, Debian's Chromium for the web UI's browser tests
// (playwright-core drives it; no browser download from elsewhere).
const TEST_SYSTEM_PACKAGES = {
  "gnome-keyring-daemon": "gnome-keyring",
  "dbus-run-session": "dbus",
  bwrap: "bubblewrap",
  chromium: "chromium",
};

function has(command) {
  return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}

if (process.argv.includes("--test") && process.platform === "linux") {
  const missing = Object.entries(TEST_SYSTEM_PACKAGES)
    .filter(([command]) => !has(command))
    .map(([, pkg]) => pkg);
  if (missing.length > 0) {
    const root = typeof process.getuid === "function" && process.getuid() === 0;
    const sudo = root ? [] : has("sudo") ? ["sudo", "-n"] : null;
    if (!has("apt-get") || sudo === null) {
      console.error(`bootstrap: the tests need ${missing.join(" and ")}; install them with your package manager.`);
      process.exit(1);
    }
    console.log(`bootstrap: installing ${missing.join(", ")} for the tests (apt-get) ...`);
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    for (const args of [
      ["update", "-qq"],
      ["install", "-y", "-qq", "--no-install-recommends", ...missing],
    ]) {
      const [cmd, ...rest] = [...sudo, "apt-get", ...args];
      const result = spawnSync(cmd, rest, { stdio: "inherit", env });
      if (result.status !== 0) {
        console.error(
          `bootstrap: apt-get ${args[0]} failed; install ${missing.join(" and ")} yourself, then run npm test again.`,
        );
        process.exit(1);
      }
    }
  }
}
