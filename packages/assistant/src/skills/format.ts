import type { InvalidSkill, ReloadResult, SkillInfo } from "./registry.ts";

// Skills as plain text, for the chat's /skills commands and `assistant skill list`.

/** `reload` is how the surface showing the list rescans the skills folder (the slash command, or the CLI command). */
export function formatSkills(skills: readonly SkillInfo[], invalid: readonly InvalidSkill[], reload: string): string {
  const lines: string[] = [];
  if (skills.length === 0)
    lines.push(
      `No skills installed (install_skill, \`assistant skill install <url>\`, or copy a folder to skills/ and ${reload}).`,
    );
  else
    lines.push(
      "Skills:",
      ...skills.map((s) => `  ${s.name}${s.catalog?.version ? ` ${s.catalog.version}` : ""}  ${s.description}`),
    );
  if (invalid.length > 0) lines.push("Skipped (invalid):", ...invalid.map((i) => `  ${i.folder}: ${i.reason}`));
  return lines.join("\n");
}

export function formatReload(result: ReloadResult): string {
  const head = `Reloaded: ${result.loaded.length} skill${result.loaded.length === 1 ? "" : "s"}${result.loaded.length ? ` (${result.loaded.join(", ")})` : ""}.`;
  if (result.invalid.length === 0) return head;
  return [head, "Skipped (invalid):", ...result.invalid.map((i) => `  ${i.folder}: ${i.reason}`)].join("\n");
}
