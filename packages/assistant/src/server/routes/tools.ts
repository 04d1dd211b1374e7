import { z } from "zod";
import type { Services } from "../../runtime/services.ts";
import { QUEUE_STATUSES } from "../../tools/approvals/queueStatus.ts";
import { readPolicyText, savePolicyText } from "../../tools/policyFile.ts";
import { type ToolResult, toolResultSchema } from "../../tools/runner.ts";
import { effectiveViewSchema, toolInfoSchema } from "../../tools/services.ts";
import { AppError } from "../../util/errors.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// Tools (docs/tools.md): the registry, the effective view of the policy, and invoke, which runs a tool the
// way the agent does (same runner, policy and review queue, never a bypass): 200 {result}, 403 policy_denied
// naming the rule, or 202 {queue_item_id} when the call waits for approval; it then runs once approved and
// reports through the tool_call_completed event.

const toolParams = z.strictObject({ name: z.string().regex(/^[a-z0-9_]{1,64}$/, "expected a tool name") });
const invokeBody = z.record(z.string(), z.unknown()).optional();
const policyTextSchema = z
  .object({ yaml: z.string(), file: z.string().describe("Where tools_policy.yaml is") })
  .meta({ id: "ToolsPolicyText" });

export function toolRoutes(services: Services): RouteSpec[] {
  const { tools } = services;
  return [
    defineRoute({
      method: "GET",
      url: "/api/tools",
      operationId: "listTools",
      summary: "The tool registry: name, description for the model, resource kind and JSON Schema parameters",
      tag: "tools",
      response: z.object({ tools: z.array(toolInfoSchema) }),
      handler: () => ({ tools: tools.list() }),
    }),
    defineRoute({
      method: "GET",
      url: "/api/tools/effective",
      operationId: "getEffectiveTools",
      summary: "Every tool as the policy in force treats it: allowed, needs approval or blocked, with the rule",
      tag: "tools",
      response: effectiveViewSchema,
      handler: () => tools.effective(),
    }),
    defineRoute({
      method: "GET",
      url: "/api/tools/policy",
      operationId: "getToolsPolicy",
      summary: "The text of tools_policy.yaml as written, comments included (empty when the file is missing)",
      tag: "tools",
      response: policyTextSchema,
      errors: ["config_invalid"],
      handler: () => readPolicyText(tools.policy.current().file),
    }),
    defineRoute({
      method: "PUT",
      url: "/api/tools/policy",
      operationId: "putToolsPolicy",
      summary:
        "Replaces tools_policy.yaml with {yaml} as sent (comments kept) once the whole text validates; applies at the next tool call",
      tag: "tools",
      body: z.strictObject({ yaml: z.string() }),
      response: policyTextSchema,
      handler: ({ body }) => savePolicyText(tools.policy.current().file, body.yaml),
    }),
    defineRoute({
      method: "POST",
      url: "/api/tools/:name/invoke",
      operationId: "invokeTool",
      summary: "Runs a tool with its parameters as the body, through the same policy and review queue as the agent",
      tag: "tools",
      params: toolParams,
      body: invokeBody,
      response: z.object({ result: toolResultSchema }),
      responses: {
        202: z.object({ queue_item_id: z.string(), status: z.enum(QUEUE_STATUSES) }).meta({ id: "ToolCallQueued" }),
      },
      errors: ["not_found", "policy_denied"],
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
