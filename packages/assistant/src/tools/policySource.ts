import { statSync } from "node:fs";
import { parseConfigText } from "../config/configFiles.ts";
import { validateConfigValue } from "../config/configValue.ts";
import { type ToolsPolicy, toolsPolicySchema } from "../config/schemas/toolsPolicy.ts";
import { readConfigText } from "../util/fileText.ts";
import type { PersistentDecisions } from "./approvals/decisions.ts";
import type { ApprovalMode } from "./approvals/mode.ts";
import type { DaemonFiles } from "./policy/daemonFiles.ts";
import { createPolicyEngine, type PolicyEngine } from "./policy/engine.ts";

// The policy in force for the next tool call: tools_policy.yaml as it is on disk now (reloaded when its size or
// modification time changes, so an edit applies without a restart), the persistent decisions and the mode.
// A missing or empty file denies everything; so does a file that stopped validating, naming the error.

export interface PolicySnapshot {
  /** The parsed file, or null when it is missing, empty or invalid. */
  policy: ToolsPolicy | null;
  /** Why `policy` is null: `missing` or the validation error. */
  problem: string | null;
  engine: PolicyEngine;
  file: string;
  /** The daemon's working directory: what `.` and other relative path entries are relative to. */
  cwd: string;
}

interface Loaded {
  stamp: string;
  policy: ToolsPolicy | null;
  problem: string | null;
  engine: PolicyEngine;
}

export class PolicySource {
  readonly #file: string;
  readonly #cwd: string;
  readonly #decisions: Pick<PersistentDecisions, "all">;
  readonly #mode: Pick<ApprovalMode, "get">;
  readonly #daemonFiles: DaemonFiles | undefined;
  readonly #sandboxed: () => boolean;
  #loaded: Loaded | null = null;

  constructor(options: {
    file: string;
    cwd: string;
    decisions: Pick<PersistentDecisions, "all">;
    mode: Pick<ApprovalMode, "get">;
    /** The daemon's own files (the built-in `protected: daemon data` rule). */
    daemonFiles?: DaemonFiles;
    /** Whether commands run in a sandbox that hides them; asked once, when the policy is first loaded. */
    sandboxed?: () => boolean;
  }) {
    this.#file = options.file;
    this.#cwd = options.cwd;
    this.#decisions = options.decisions;
    this.#mode = options.mode;
    this.#daemonFiles = options.daemonFiles;
    this.#sandboxed = options.sandboxed ?? (() => true);
  }

  get cwd(): string {
    return this.#cwd;
  }

  current(): PolicySnapshot {
    const loaded = this.#load();
    const engine = loaded.engine.withDecisions(this.#decisions.all()).withMode(this.#mode.get());
    return { policy: loaded.policy, problem: loaded.problem, engine, file: this.#file, cwd: this.#cwd };
  }

  #load(): Loaded {
    const stamp = fileStamp(this.#file);
    if (this.#loaded && this.#loaded.stamp === stamp) return this.#loaded;
    const { policy, problem } = stamp === "missing" ? MISSING_FILE : readPolicyFile(this.#file);
    const engine = createPolicyEngine({
      policy,
      policyFile: this.#file,
      cwd: this.#cwd,
      commandSandbox: this.#sandboxed(),
      ...(this.#daemonFiles ? { daemonFiles: this.#daemonFiles } : {}),
      ...(problem && stamp !== "missing" ? { missingReason: problem } : {}),
    });
    this.#loaded = { stamp, policy, problem, engine };
    return this.#loaded;
  }
}

const MISSING_FILE = { policy: null, problem: "tools_policy.yaml is missing" };

/** Reads tools_policy.yaml: the policy, or null with the reason (missing, empty, invalid and why). */
export function readPolicyFile(file: string): { policy: ToolsPolicy | null; problem: string | null } {
  const text = readConfigText(file);
  if (text === undefined) return MISSING_FILE;
  try {
    const raw = parseConfigText("yaml", text, file);
    if (raw === null) return { policy: null, problem: "tools_policy.yaml is empty" };
    return { policy: validateConfigValue(toolsPolicySchema, raw, file), problem: null };
  } catch (error) {
    return { policy: null, problem: `tools_policy.yaml is invalid: ${(error as Error).message}` };
  }
}

function fileStamp(file: string): string {
  try {
    // Checked on every chat turn: a missing file answers undefined instead of building a thrown error.
    const stat = statSync(file, { throwIfNoEntry: false });
    return stat ? `${stat.size}:${stat.mtimeMs}:${stat.ino}` : "missing";
  } catch {
    return "missing";
  }
}
