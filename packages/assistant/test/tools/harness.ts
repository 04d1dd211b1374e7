import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach } from "vitest";
import { stringify } from "yaml";
import { type DataPaths, dataPaths } from "../../src/config/paths.ts";
import type { ToolsPolicyInput } from "../../src/config/schemas/toolsPolicy.ts";
import { readSettings } from "../../src/config/settings.ts";
import { EventLog } from "../../src/events/eventLog.ts";
import type { EventKind, StoredEvent } from "../../src/events/registry.ts";
import { openDatabase } from "../../src/store/database.ts";
import { type ApprovalServices, createApprovalServices } from "../../src/tools/approvals/services.ts";
import type { InvokeOptions, ToolResult, ToolRunner } from "../../src/tools/runner.ts";
import { createToolServices, type EffectiveView, type ToolServices } from "../../src/tools/services.ts";
import { tempDataDir } from "../helpers/daemon.ts";
import { vaultWithSecrets } from "../helpers/vault.ts";

// The tool runner exactly as the daemon builds it (createToolServices): a real assistant.db with its review
// queue, decisions and mode, a real vault, tools_policy.yaml written to the data directory. `root` is a scratch
// directory the policy can name; the runner's working directory is `root/cwd`.

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

export interface ToolHarness {
  root: string;
  cwd: string;
  paths: DataPaths;
  runner: ToolRunner;
  tools: ToolServices;
  /** GET /api/tools/effective as the daemon computes it. */
  effective(): EffectiveView;
  approvals: ApprovalServices;
  /** Replaces tools_policy.yaml (null removes it). */
  setPolicy(policy: ToolsPolicyInput | string | null): void;
  invoke(name: string, args: unknown, options?: InvokeOptions): Promise<ToolResult>;
  eventsOf<K extends EventKind>(...kinds: K[]): StoredEvent<K>[];
  /** What the runner logged as warnings (message and fields). */
  warnings: Array<{ message: string; fields: unknown }>;
  /** Approves (or denies) the next item that waits in the review queue. */
  answerNext(status: "approve" | "deny", note?: string): Promise<string>;
}

export function toolHarness(
  options: {
    policy?: ToolsPolicyInput | string | null;
    secrets?: Record<string, string>;
    env?: NodeJS.ProcessEnv;
  } = {},
): ToolHarness {
  const root = tempDataDir("assistant-tools-");
  const cwd = join(root, "cwd");
  mkdirSync(cwd, { recursive: true });
  const paths = dataPaths(join(root, "data"));
  mkdirSync(paths.dataDir, { recursive: true });
  const db = openDatabase(paths.database);
  const events = new EventLog(db);
  const env = { ...options.env };
  const settings = readSettings(env); // as the daemon parses its environment
  const approvals = createApprovalServices({ db, settings, events });
  const vault = vaultWithSecrets(paths, options.secrets ?? {});
  const warnings: ToolHarness["warnings"] = [];
  const logger = { warn: (message: string, fields?: unknown) => void warnings.push({ message, fields }) };
  const services = createToolServices({ paths, env, settings, vault, approvals, events, logger, cwd });
  const { runner } = services;
  cleanups.push(() => {
    approvals.close();
    db.close();
    rmSync(root, { recursive: true, force: true });
  });
  const setPolicy = (policy: ToolsPolicyInput | string | null) => {
    if (policy === null) rmSync(paths.toolsPolicy, { force: true });
    else writeFileSync(paths.toolsPolicy, typeof policy === "string" ? policy : stringify(policy));
  };
  if (options.policy !== undefined) setPolicy(options.policy);
  return {
    root,
    cwd,
    paths,
    runner,
    tools: services,
    effective: () => services.effective(),
    approvals,
    setPolicy,
    invoke: (name, args, invokeOptions) => runner.invoke(name, args, invokeOptions),
    eventsOf: (...kinds) => events.list({ kinds, limit: 1000 }),
    warnings,
    async answerNext(status, note) {
      for (let i = 0; i < 500; i++) {
        const pending = approvals.queue.list({ status: "pending" }).items[0];
        if (pending) {
          approvals.queue[status](pending.id, note);
          return pending.id;
        }
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error("no review queue item appeared");
    },
  };
}
