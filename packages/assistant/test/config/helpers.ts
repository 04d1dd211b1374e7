import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { type DataPaths, dataPaths } from "../../src/config/paths.ts";
import { AppError, ConfigError } from "../../src/util/errors.ts";

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

/** Runs `fn`, expects an error of `kind`, and returns it for the caller's assertions. */
function thrown<E extends Error>(fn: () => unknown, kind: new (...args: never[]) => E): E {
  try {
    fn();
  } catch (error) {
    if (error instanceof kind) return error;
    throw error;
  }
  throw new Error(`expected a ${kind.name}, nothing was thrown`);
}

export const configError = (fn: () => unknown): ConfigError => thrown(fn, ConfigError);
export const appError = (fn: () => unknown): AppError => thrown(fn, AppError);
