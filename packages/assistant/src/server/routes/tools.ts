import { z } from "zod";
import type { Services } from "../../runtime/services.ts";
import { APPROVAL_MODES } from "../../tools/approvals/mode.ts";
import type { ToolResult } from "../../tools/runner.ts";
import { AppError } from "../../util/errors.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// Tools (docs/tools.md): the registry, the effective view of the policy, and invoke, which runs a tool the
// way the agent does (same runner, policy and review queue, never a bypass): 200 {result}, 403 policy_denied
// naming the rule, or 202 {queue_item_id} when the call waits for approval; it then runs once approved and
// reports through the tool_call_completed event.

const toolParams = z.strictObject({ name: z.string().regex(/^[a-z0-9_]{1,64}$/, "expected a tool name") });
const invokeBody = z.record(z.string(), z.unknown()).optional();

const resultSchema = z.object({
  call_id: z.string(),
  tool: z.string(),
  status: z.enum(["ok", "denied", "error", "invalid_arguments"]),
  output: z.string(),
  truncated: z.boolean(),
  rule: z.string().optional(),
  source: z.string().optional(),
  queue_item_id: z.string().optional(),
});

const effectiveSchema = z.object({
  policy_file: z.string(),
  policy_status: z.enum(["ok", "missing", "empty", "invalid"]),
  problem: z.string().nullable(),
  mode: z.enum(APPROVAL_MODES),
  default_profile: z.string().nullable(),
  builtin_rules: z.array(z.object({ rule: z.string(), description: z.string() })),
  command_sandbox: z.object({ available: z.boolean(), description: z.string() }),
  tools: z.array(
    z.object({
      name: z.string(),
      resource: z.string(),
      status: z.enum(["allowed", "needs_approval", "blocked"]),
      rule: z.string(),
      source: z.string(),
      allowed: z.array(z.string()),
      blocked: z.array(z.string()),
      decisions: z.array(z.object({ id: z.string(), scope: z.string(), effect: z.enum(["allow", "deny"]) })),
    }),
  ),
});

export function toolRoutes(services: Services): RouteSpec[] {
  const { tools } = services;
  return [
    defineRoute({
      method: "GET",
      url: "/api/tools",
      summary: "The tool registry: name, description for the model, resource kind and JSON Schema parameters",
      tag: "tools",
      response: z.object({
        tools: z.array(
          z.object({ name: z.string(), description: z.string(), resource: z.string(), parameters: z.unknown() }),
        ),
      }),
      handler: () => ({ tools: tools.list() }),
    }),
    defineRoute({
      method: "GET",
      url: "/api/tools/effective",
      summary: "Every tool as the policy in force treats it: allowed, needs approval or blocked, with the rule",
      tag: "tools",
      response: effectiveSchema,
      handler: () => tools.effective(),
    }),
    defineRoute({
      method: "POST",
      url: "/api/tools/:name/invoke",
      summary: "Runs a tool with its parameters as the body, through the same policy and review queue as the agent",
      tag: "tools",
      params: toolParams,
      body: invokeBody,
      response: z.union([
        z.object({ result: resultSchema }),
        z.object({ queue_item_id: z.string(), status: z.string() }),
      ]),
      handler: ({ params, body }, _request, reply) => {
        if (!tools.runner.get(params.name)) {
          const known = tools
            .list()
            .map((t) => t.name)
            .join(", ");
          throw new AppError("not_found", `no tool named ${params.name}; tools: ${known}`);
        }
        return new Promise((resolve, reject) => {
          let answered = false;
          tools.runner
            .invoke(params.name, body ?? {}, {
              onApprovalRequested: (item) => {
                if (answered) return;
                answered = true;
                reply.code(202);
                resolve({ queue_item_id: item.id, status: item.status });
              },
            })
            .then((result) => {
              if (answered) return;
              answered = true;
              const error = resultError(result);
              if (error) reject(error);
              else resolve({ result });
            }, reject);
        });
      },
    }),
  ];
}

/** Denials and argument errors are HTTP errors for the invoke caller; other failures are results. */
function resultError(result: ToolResult): AppError | null {
  if (result.status === "denied") {
    return new AppError("policy_denied", result.output, {
      tool: result.tool,
      rule: result.rule,
      source: result.source,
      ...(result.queue_item_id ? { queue_item_id: result.queue_item_id } : {}),
    });
  }
  if (result.status === "invalid_arguments")
    return new AppError("invalid_request", result.output, { tool: result.tool });
  return null;
}
