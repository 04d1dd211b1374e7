import { accessSync, constants, mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { AppError } from "../util/errors.ts";

// The data directory must be a folder this user can write. Both init and doctor ask the same question, and both
// want one sentence a person can act on instead of a bare ENOTDIR or EACCES.

const HINT = "set ASSISTANT_DATA_DIR to a folder you own";

/** Why `dir` cannot be used as the data directory, or undefined when it can (or can be created). */
export function dataDirProblem(dir: string): string | undefined {
  const stat = statOrUndefined(dir);
  if (stat) {
    if (!stat.isDirectory()) return `${dir} exists but is not a folder; ${HINT}`;
    return writableProblem(dir);
  }
  // Missing: find the nearest existing ancestor and check that the folder could be created inside it.
  let ancestor = dirname(dir);
  while (ancestor !== dirname(ancestor) && !statOrUndefined(ancestor)) ancestor = dirname(ancestor);
  const parent = statOrUndefined(ancestor);
  if (parent && !parent.isDirectory()) return `cannot create ${dir}: ${ancestor} is a file, not a folder; ${HINT}`;
  return writableProblem(ancestor, dir);
}

/** Creates the data directory (mode 0700) when missing; a clear AppError when it cannot be used. */
export function ensureDataDir(dir: string): { created: boolean } {
  const problem = dataDirProblem(dir);
  if (problem) throw new AppError("invalid_request", `the data directory cannot be used: ${problem}`);
  const created = statOrUndefined(dir) === undefined;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new AppError(
      "invalid_request",
      `cannot create the data directory ${dir} (${(error as Error).message}); ${HINT}`,
    );
  }
  return { created };
}

function writableProblem(existing: string, target = existing): string | undefined {
  try {
    accessSync(existing, constants.W_OK | constants.X_OK);
    return undefined;
  } catch {
    return existing === target
      ? `${target} is not writable; ${HINT}`
      : `cannot create ${target}: ${existing} is not writable; ${HINT}`;
  }
}

function statOrUndefined(path: string) {
  try {
    return statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ENOTDIR") return undefined; // a file somewhere above: the ancestor walk reports it
    throw error;
  }
}
