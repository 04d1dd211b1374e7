import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { type DataPaths, dataPaths } from "../../src/config/paths.ts";
import { ConfigError } from "../../src/util/errors.ts";

// Config tests work on real files: a fresh data directory (and an empty project root for the router lookup) each.

const made: string[] = [];

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export interface TempData {
  paths: DataPaths;
  /** An empty directory standing in for the project root, so the working directory never leaks into a test. */
  projectRoot: string;
  write(name: string, text: string): string;
}

export function tempData(): TempData {
  const dir = mkdtempSync(join(tmpdir(), "assistant-config-"));
  made.push(dir);
  const paths = dataPaths(join(dir, "data"));
  const projectRoot = join(dir, "project");
  mkdirSync(paths.dataDir, { recursive: true });
  mkdirSync(projectRoot);
  return {
    paths,
    projectRoot,
    write(name, text) {
      const path = join(paths.dataDir, name);
      writeFileSync(path, text);
      return path;
    },
  };
}

/** Runs `fn`, expects a ConfigError, and returns it for the caller's assertions. */
export function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError, nothing was thrown");
}
