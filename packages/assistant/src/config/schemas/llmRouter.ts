import * as z from "zod";
import { type ProviderName, ROUTE_PROVIDERS } from "../providerIds.ts";
import { httpUrl, nonEmptyString } from "./common.ts";

// llm_router.yaml (docs/configuration.md, docs/models.md). Strict everywhere except `model_options.*.extra`: a typo in
// a key must be an error, not a silently ignored setting.

export { PROVIDER_NAMES, type ProviderName, ROUTE_PROVIDERS, type RouteProvider } from "../providerIds.ts";

export const INT32_MIN = -2_147_483_648;
export const INT32_MAX = 2_147_483_647;

/** Route config goes to servers that store these numbers as 32-bit ints; larger values are clamped, not refused. */
export function clampInt32(value: number): number {
  return Math.min(INT32_MAX, Math.max(INT32_MIN, value));
}

const int32 = z
  .number()
  .refine((n) => Number.isInteger(n), "expected a whole number")
  .transform(clampInt32);

const VAULT_REF = /^vault:\/\/[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `vault://<key_name>` or an environment variable name; never the key itself (the message does not echo it). */
export const apiKeyRef = z
  .string()
  .refine(
    (value) => VAULT_REF.test(value) || ENV_NAME.test(value),
    "expected vault://<key_name> or the name of an environment variable (the key itself belongs in the vault)",
  );

export const providerSchema = z.strictObject({
  api_key_ref: apiKeyRef.optional(),
  base_url: httpUrl.optional(),
  organization: z.string().optional(),
  version: z.string().optional(),
  always_available: z.boolean().optional(),
  /** Calls the server serves at once; the router keeps no more in flight and lets waiting ones go by priority. */
  parallel: z.number().int().positive().optional(),
  site_url: httpUrl.optional(),
  app_title: z.string().optional(),
});

export const providersSchema = z.strictObject({
  local_server: providerSchema.optional(),
  cloud_a: providerSchema.optional(),
  cloud_azure: providerSchema.optional(),
  cloud_b: providerSchema.optional(),
  lowbit_server: providerSchema.optional(),
} satisfies Record<ProviderName, unknown>);

export const routerGlobalSchema = z.strictObject({
  enable_metrics: z.boolean().default(true),
  enable_fallback: z.boolean().default(true),
  default_timeout_secs: z.number().int().positive().default(300),
  default_max_retries: z.number().int().min(0).default(2),
});

export const modelOptionsSchema = z.strictObject({
  context_length_max: int32.optional(),
  num_ctx: int32.optional(),
  family: z.string().optional(),
  parameter_size: z.string().optional(),
  capabilities: z.array(z.string()).optional(),
  modified_at: z.string().optional(),
  extra: z.record(z.string(), z.unknown()).optional(), // free-form provider metadata
});

/** Route `config`: merged into completion requests. `max_token` is the legacy spelling of `max_tokens`. */
export const routeConfigSchema = z
  .strictObject({
    temperature: z.number().min(0).optional(),
    top_p: z.number().min(0).max(1).optional(),
    top_k: int32.optional(),
    frequency_penalty: z.number().optional(),
    presence_penalty: z.number().optional(),
    repeat_penalty: z.number().optional(),
    num_ctx: int32.optional(),
    num_gpu: int32.optional(),
    max_tokens: int32.optional(),
    max_token: int32.optional(),
    thinking_level: z.string().optional(),
    default_size: z
      .string()
      .regex(/^[1-9][0-9]*x[1-9][0-9]*$/, "expected <width>x<height>, for example 1024x1024")
      .optional(),
  })
  .superRefine((config, ctx) => {
    if (config.max_token !== undefined && config.max_tokens !== undefined) {
      ctx.addIssue({ code: "custom", path: ["max_token"], message: "legacy alias of max_tokens; set only max_tokens" });
    }
  })
  .transform(({ max_token, ...config }) =>
    max_token !== undefined && config.max_tokens === undefined ? { ...config, max_tokens: max_token } : config,
  );

export const routeTargetSchema = z.strictObject({
  provider: z.enum(ROUTE_PROVIDERS),
  model: nonEmptyString,
  config: routeConfigSchema.optional(),
});

export const taskRouteSchema = z.strictObject({
  primary: routeTargetSchema,
  fallback: z.array(routeTargetSchema).default([]),
  constraints: z
    .strictObject({
      max_cost_per_request: z.number().min(0).optional(), // USD
      max_latency_secs: z.number().positive().optional(),
    })
    .optional(),
});

export const llmRouterSchema = z.strictObject({
  version: z.string().optional(),
  global: routerGlobalSchema.prefault({}),
  providers: providersSchema.default({}),
  model_options: z.record(nonEmptyString, modelOptionsSchema).default({}),
  // Any task type name is a valid key; names with no entry fall back to defaults in the router.
  task_types: z.record(nonEmptyString, taskRouteSchema).default({}),
});

export type LlmRouterConfig = z.output<typeof llmRouterSchema>;
export type LlmRouterInput = z.input<typeof llmRouterSchema>;
export type RouterGlobal = z.output<typeof routerGlobalSchema>;
export type ProviderConfig = z.output<typeof providerSchema>;
export type ModelOptions = z.output<typeof modelOptionsSchema>;
export type RouteConfig = z.output<typeof routeConfigSchema>;
export type RouteTarget = z.output<typeof routeTargetSchema>;
export type TaskRoute = z.output<typeof taskRouteSchema>;
