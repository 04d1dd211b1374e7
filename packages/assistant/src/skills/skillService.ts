import { z } from "zod";
import type { DataPaths } from "../config/paths.ts";
import { toolsPolicySchema } from "../config/schemas/toolsPolicy.ts";
import type { DaemonSettings } from "../config/settings.ts";
import { addToYamlList, updateYamlFile } from "../config/yamlDocument.ts";
import type { EventLog } from "../events/eventLog.ts";
import type { Logger } from "../log/logger.ts";
import type { ReviewQueue } from "../tools/approvals/queue.ts";
import { SOURCE_DEFAULT } from "../tools/policy/types.ts";
import type { PolicySource } from "../tools/policySource.ts";
import { safeFetch } from "../tools/safeFetch.ts";
import { ToolDenied, ToolFailure } from "../tools/tool.ts";
import { AppError } from "../util/errors.ts";
import { installedSkillSchema, installSkill } from "./install.ts";
import type { SkillRegistry } from "./registry.ts";

// Installing skills for every surface (install_skill tool, POST /api/skills/install, `assistant skill install`).
// The caller says how a host is permitted: the agent's tool call goes through the policy and review queue, the
// operator's own request through the policy alone. A skill that runs commands missing from allowed_commands gets
// them only when the user approves that policy change in the review queue; the approval is honoured even when
// it comes after a daemon restart.

/** The rule naming a policy-change request in the review queue. */
export const POLICY_CHANGE_RULE = "skill install: add commands to allowed_commands";

export const skillInstallResultSchema = installedSkillSchema
  .extend({
    /** The review-queue item that adds the skill's commands to allowed_commands, when some are missing. */
    policy_change: z.object({ queue_item_id: z.string(), commands: z.array(z.string()) }).nullable(),
  })
  .meta({ id: "SkillInstall" });

export type SkillInstallResult = z.infer<typeof skillInstallResultSchema>;

export interface InstallRequest {
  replace?: boolean;
  /** Throws (ToolDenied) when the host may not be used. */
  permitHost: (host: string) => Promise<unknown>;
  signal?: AbortSignal;
  taskId?: string;
  sessionId?: string;
}

export class SkillService {
  readonly #registry: SkillRegistry;
  readonly #paths: DataPaths;
  readonly #settings: Pick<DaemonSettings, "githubEnterpriseHosts">;
  readonly #policy: PolicySource;
  readonly #queue: ReviewQueue;
  readonly #events: Pick<EventLog, "emit">;
  readonly #logger: Pick<Logger, "info" | "warn">;
  readonly #closing = new AbortController();

  constructor(options: {
    registry: SkillRegistry;
    paths: DataPaths;
    settings: Pick<DaemonSettings, "githubEnterpriseHosts">;
    policy: PolicySource;
    queue: ReviewQueue;
    events: Pick<EventLog, "emit">;
    logger: Pick<Logger, "info" | "warn">;
  }) {
    this.#registry = options.registry;
    this.#paths = options.paths;
    this.#settings = options.settings;
    this.#policy = options.policy;
    this.#queue = options.queue;
    this.#events = options.events;
    this.#logger = options.logger;
    this.#resumePending();
  }

  async install(url: string, request: InstallRequest): Promise<SkillInstallResult> {
    const installed = await installSkill(url, {
      skillsDir: this.#paths.skillsDir,
      enterpriseHosts: this.#settings.githubEnterpriseHosts,
      replace: request.replace === true,
      fetch: async (target, { accept, maxBytes }) =>
        safeFetch(target, {
          accept,
          maxBytes,
          ...(request.signal ? { signal: request.signal } : {}),
          permit: async (hop) => {
            if (hop.protocol !== "https:") {
              throw new ToolDenied(
                "skills install over HTTPS only",
                SOURCE_DEFAULT,
                `${hop.href} is not HTTPS; skills install over HTTPS only`,
              );
            }
            await request.permitHost(hop.hostname);
          },
        }),
    });
    this.#registry.reload();
    this.#events.emit("skill_installed", { name: installed.name, source: url, files: installed.files.length });
    const allowed = new Set(this.#policy.current().policy?.allowed_commands ?? []);
    const missing = installed.commands.filter((c) => !allowed.has(c));
    let policyChange: SkillInstallResult["policy_change"] = null;
    if (missing.length > 0) {
      const item = this.#queue.request({
        tool: "install_skill",
        arguments: { skill: installed.name, add_allowed_commands: missing },
        rule: POLICY_CHANGE_RULE,
        ...(request.taskId ? { task_id: request.taskId } : {}),
        ...(request.sessionId ? { session_id: request.sessionId } : {}),
      });
      this.#awaitDecision(item.id, installed.name, missing);
      policyChange = { queue_item_id: item.id, commands: missing };
    }
    return { ...installed, policy_change: policyChange };
  }

  /**
   * The operator's own install (HTTP, CLI): the host rules apply in full, the approval step does not, since the
   * operator is the one asking. Policy refusals and network failures become AppErrors for the surface.
   */
  async installAsOperator(url: string, replace: boolean): Promise<SkillInstallResult> {
    try {
      return await this.install(url, {
        replace,
        permitHost: async (host) => {
          const decision = this.#policy.current().engine.decide({ kind: "skill_install", tool: "install_skill", host });
          if (decision.effect === "deny") {
            throw new ToolDenied(
              decision.rule,
              decision.source,
              `skill installs from ${host} are refused (${decision.rule})`,
            );
          }
        },
      });
    } catch (error) {
      if (error instanceof ToolDenied) {
        throw new AppError("policy_denied", error.message, { rule: error.rule, source: error.source });
      }
      if (error instanceof ToolFailure) throw new AppError("invalid_request", `not installed: ${error.message}`);
      throw error;
    }
  }

  close(): void {
    this.#closing.abort(new Error("the daemon is stopping"));
  }

  #awaitDecision(itemId: string, skill: string, commands: string[]): void {
    this.#queue.waitFor(itemId, this.#closing.signal).then(
      (item) => {
        if (item.status !== "approved") return;
        try {
          updateYamlFile(
            this.#paths.toolsPolicy,
            (doc) => {
              for (const c of commands) addToYamlList(doc, "allowed_commands", c);
            },
            toolsPolicySchema,
          );
          this.#logger.info("allowed_commands extended for a skill", { skill, commands });
        } catch (error) {
          this.#logger.warn("could not add a skill's commands to allowed_commands", {
            skill,
            error: (error as Error).message,
          });
        }
      },
      () => {}, // the daemon is stopping: the item stays pending and is picked up at the next start
    );
  }

  /** Pending policy-change items from before a restart: an approval given later still applies. */
  #resumePending(): void {
    for (const item of this.#queue.list({ status: "pending", limit: 500 }).items) {
      if (item.tool !== "install_skill" || item.rule !== POLICY_CHANGE_RULE) continue;
      try {
        const args = JSON.parse(item.arguments_summary) as { skill?: unknown; add_allowed_commands?: unknown };
        const commands = Array.isArray(args.add_allowed_commands)
          ? args.add_allowed_commands.filter(
              (c): c is string => typeof c === "string" && /^[A-Za-z0-9_.+-]{1,64}$/.test(c),
            )
          : [];
        if (commands.length > 0) this.#awaitDecision(item.id, String(args.skill), commands);
      } catch {
        this.#logger.warn("a pending skill policy change could not be read", { queue_item_id: item.id });
      }
    }
  }
}
