import { isAbsolute } from "node:path";
import * as z from "zod";
import { parseJsonWith } from "../util/parseJson.ts";
import { routingRulesSchema } from "./routingRules.ts";

// plugin.json, the manifest beside a plugin's .wasm file: who the plugin is, what kind, which functions it
// exports, the tools it provides, and the capabilities it asks for. Anything not asked for is not given: no
// network unless hosts are listed, no files outside the paths listed (and the tools policy must allow both too),
// only the config keys it names. Limits may only tighten the daemon's own.

export const PLUGIN_KINDS = ["tool", "channel", "home_hub", "router"] as const;
export type PluginKind = (typeof PLUGIN_KINDS)[number];

export const PLUGIN_ID = /^[a-z0-9][a-z0-9_]{0,31}$/;
const exportName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "an exported function name");
const host = z
  .string()
  .min(1)
  .max(253)
  .regex(/^(\*\.)?[a-z0-9.-]+$/i, "a host name, optionally starting with *.");

const toolSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9_]{1,32}$/, "1 to 32 lowercase letters, digits or _"),
  description: z.string().min(1).max(1000),
  export: exportName,
  /** The plugin's input: the arguments as JSON (default), or the text of this one string parameter. */
  input_param: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/)
    .optional(),
  parameters: z
    .record(z.string(), z.unknown())
    .refine((s) => s.type === "object", "parameters must be a JSON Schema with type: object")
    .default({ type: "object", properties: {} }),
});

export const manifestSchema = z
  .strictObject({
    id: z.string().regex(PLUGIN_ID, "1 to 32 lowercase letters, digits or _, starting with a letter or digit"),
    name: z.string().min(1).max(100),
    version: z.string().min(1).max(64),
    kind: z.enum(PLUGIN_KINDS),
    description: z.string().max(2000).default(""),
    author: z.string().max(200).optional(),
    homepage: z.string().max(2000).optional(),
    trust_level: z.string().max(64).optional(),
    /** The module file in the plugin folder. */
    wasm: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,100}\.wasm$/, "a .wasm file name in the plugin folder")
      .default("plugin.wasm"),
    exports: z.array(exportName).min(1).max(100),
    tools: z.array(toolSchema).max(50).default([]),
    capabilities: z
      .strictObject({
        allowed_hosts: z.array(host).max(50).default([]),
        /** Absolute folders (or files) the plugin may use through its fs host function, if the policy agrees too. */
        allowed_paths: z
          .array(
            z
              .string()
              .min(1)
              .max(4096)
              .refine((p) => isAbsolute(p), "an absolute path (~ and relative paths are not expanded)")
              .refine((p) => !p.includes("\0"), "no NUL bytes"),
          )
          .max(50)
          .default([]),
        /** Config keys the plugin reads; values come from the vault as plugin.<id>.<key>. */
        config_keys: z
          .array(z.string().regex(/^[a-z0-9_]{1,64}$/))
          .max(50)
          .default([]),
      })
      .default({ allowed_hosts: [], allowed_paths: [], config_keys: [] }),
    limits: z
      .strictObject({
        timeout_ms: z.number().int().min(10).max(60_000).optional(),
        memory_mb: z.number().int().min(1).max(1024).optional(),
        /** Instructions per call (wasmMetering.ts). */
        fuel: z.number().int().min(1000).max(Number.MAX_SAFE_INTEGER).optional(),
      })
      .default({}),
    routing_rules: routingRulesSchema.default([]),
  })
  .superRefine((m, ctx) => {
    const exported = new Set(m.exports);
    m.tools.forEach((t, i) => {
      if (!exported.has(t.export)) {
        ctx.addIssue({ code: "custom", path: ["tools", i, "export"], message: `${t.export} is not in exports` });
      }
    });
    if (m.kind === "tool" && m.tools.length === 0) {
      ctx.addIssue({ code: "custom", path: ["tools"], message: "a tool plugin declares at least one tool" });
    }
    const names = m.tools.map((t) => t.name);
    if (new Set(names).size !== names.length) {
      ctx.addIssue({ code: "custom", path: ["tools"], message: "tool names must be unique" });
    }
  })
  .meta({ id: "PluginManifest" });

export type PluginManifest = z.output<typeof manifestSchema>;

/** Parses plugin.json text; throws an Error whose message names the field. */
export function parseManifest(text: string): PluginManifest {
  return parseJsonWith(manifestSchema, text, "plugin.json");
}
