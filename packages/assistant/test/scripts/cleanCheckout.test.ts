import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

// `npm start` and `npm test` install and build before anything else (scripts/bootstrap.mjs, scripts/build.mjs);
// on a fresh clone that must leave every tracked file as committed. An install that rewrites package-lock.json
// (platform binaries, install-script flags) made every newcomer's clone dirty before they changed anything.
// `npm test` runs this after its own install and build, so it checks exactly what a fresh clone goes through.

const root = resolve(import.meta.dirname, "..", "..", "..", "..");

function git(...args: string[]): string {
  const run = spawnSync("git", ["-C", root, ...args], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${run.stderr}`);
  return run.stdout;
}

describe("a checkout after the install and the build", () => {
  it("keeps the lock file and every package manifest as committed", () => {
    expect(existsSync(resolve(root, ".git")), "the tests run from a git clone").toBe(true);
    const manifests = ["package-lock.json", "package.json", "packages/*/package.json", "toolchain/package*.json"];
    const changed = git("status", "--porcelain", "--", ...manifests);
    expect(changed, "the install rewrote these files: run `git diff` on them").toBe("");
  });

  it("writes what it builds and installs only where git ignores it", () => {
    const outputs = [
      "node_modules",
      "packages/assistant/dist",
      "packages/client/dist",
      "packages/web/dist",
      "toolchain/node_modules",
    ];
    const present = outputs.filter((path) => existsSync(resolve(root, path)));
    expect(present).toContain("node_modules");
    expect(present).toContain("packages/assistant/dist");
    expect(present).toContain("packages/web/dist");
    const ignored = git("check-ignore", ...present)
      .trim()
      .split("\n");
    expect(ignored.sort()).toEqual([...present].sort());
  });
});
