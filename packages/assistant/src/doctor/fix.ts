import { chmodSync } from "node:fs";
import { basename } from "node:path";
import { alignDefaultRoute, DEFAULT_ROUTER_YAML, STARTER_TOOLS_POLICY } from "../config/defaults.ts";
import type { DataPaths } from "../config/paths.ts";
import { ensureDataDir } from "../setup/dataDir.ts";
import { writeFileAtomic } from "../util/atomicWrite.ts";
import { ConfigError } from "../util/errors.ts";
import { readConfigText } from "../util/fileText.ts";
import { defaultRouteState } from "./checkRouter.ts";
import { dataFiles, modeOf } from "./checkVault.ts";

// `assistant doctor --fix`: repairs what can be repaired without a person's judgement. It creates what is
// missing and tightens permissions; it never replaces a file that exists, and it edits llm_router.yaml only
// through the comment-keeping YAML editor, and only when the default route lost its embedded model or core.

export interface FixChange {
  file: string;
  action: "created" | "updated" | "chmod";
  detail: string;
}

export interface FixReport {
  changes: FixChange[];
  /** What doctor could not repair and why (the checks say how to do it by hand). */
  skipped: { file: string; reason: string }[];
}

export interface FixOptions {
  projectRoot?: string;
}

export function applyFixes(
  paths: DataPaths,
  _env: NodeJS.ProcessEnv = process.env,
  options: FixOptions = {},
): FixReport {
  const report: FixReport = { changes: [], skipped: [] };
  if (ensureDataDir(paths.dataDir).created) {
    report.changes.push({ file: paths.dataDir, action: "created", detail: "data directory (mode 0700)" });
  }
  if (readConfigText(paths.toolsPolicy) === undefined) {
    writeFileAtomic(paths.toolsPolicy, STARTER_TOOLS_POLICY, 0o600);
    report.changes.push({
      file: paths.toolsPolicy,
      action: "created",
      detail: "starter tools policy (everything denied until you allow it)",
    });
  }
  fixRouter(paths, options, report);
  fixModes(paths, report);
  return report;
}

function fixRouter(paths: DataPaths, options: FixOptions, report: FixReport): void {
  const state = defaultRouteState(paths, options.projectRoot);
  if (state.kind === "missing") {
    writeFileAtomic(paths.routerFile, DEFAULT_ROUTER_YAML, 0o600);
    report.changes.push({
      file: paths.routerFile,
      action: "created",
      detail: "default route: embedded model, then core",
    });
  } else if (state.kind === "invalid") {
    report.skipped.push({
      file: state.file,
      reason: "invalid; fix it by hand (`assistant config validate` says where)",
    });
  } else if (state.kind === "misaligned") {
    try {
      if (alignDefaultRoute(state.file).changed) {
        report.changes.push({
          file: state.file,
          action: "updated",
          detail: "conversation route: assistant_embedded/default first, assistant_core/core last (comments kept)",
        });
      }
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      report.skipped.push({ file: state.file, reason: error.message });
    }
  }
}

/** Data directory 0700 and the files directly in it 0600: they hold config, secrets and the database. */
function fixModes(paths: DataPaths, report: FixReport): void {
  if (process.platform === "win32") return;
  const dirMode = modeOf(paths.dataDir);
  if (dirMode !== undefined && dirMode & 0o077) {
    chmodSync(paths.dataDir, 0o700);
    report.changes.push({
      file: paths.dataDir,
      action: "chmod",
      detail: `data directory 0${dirMode.toString(8)} -> 0700`,
    });
  }
  for (const file of dataFiles(paths.dataDir)) {
    const mode = modeOf(file);
    if (mode === undefined || (mode & 0o077) === 0) continue;
    chmodSync(file, 0o600);
    report.changes.push({ file, action: "chmod", detail: `${basename(file)} 0${mode.toString(8)} -> 0600` });
  }
}
