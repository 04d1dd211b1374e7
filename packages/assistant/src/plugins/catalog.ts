import { z } from "zod";
import type { SkillInfo } from "../skills/registry.ts";
import type { PluginInfo } from "./registry.ts";

// `assistant plugin catalog` / GET /api/plugins/catalog: every installed extension, plugins and skills, with the
// catalog metadata a user weighs before trusting one (author, version, trust level, compatibility, status).

export const catalogEntrySchema = z
  .object({
    type: z.enum(["plugin", "skill"]),
    id: z.string(),
    name: z.string(),
    version: z.string().nullable(),
    kind: z.string(),
    description: z.string(),
    author: z.string().nullable(),
    trust_level: z.string().nullable(),
    compat_status: z.string().nullable(),
    tags: z.array(z.string()),
    status: z.string(),
  })
  .meta({ id: "CatalogEntry" });

export type CatalogEntry = z.infer<typeof catalogEntrySchema>;

export function catalogEntries(plugins: readonly PluginInfo[], skills: readonly SkillInfo[]): CatalogEntry[] {
  return [
    ...plugins.map((p) => ({
      type: "plugin" as const,
      id: p.plugin_id,
      name: p.name,
      version: p.version,
      kind: p.kind,
      description: p.description,
      author: p.author,
      trust_level: p.trust_level,
      compat_status: null,
      tags: [],
      status: p.disabled_by_reputation ? "disabled by reputation" : "enabled",
    })),
    ...skills.map((s) => ({
      type: "skill" as const,
      id: s.catalog?.id ?? s.name,
      name: s.catalog?.name ?? s.name,
      version: s.catalog?.version ?? s.metadata.version ?? null,
      kind: s.catalog?.category ?? "skill",
      description: s.description,
      author: s.catalog?.author ?? null,
      trust_level: s.catalog?.trust_level ?? null,
      compat_status: s.catalog?.compat_status ?? null,
      tags: s.catalog?.tags ?? [],
      status: "installed",
    })),
  ];
}
