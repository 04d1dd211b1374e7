import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { envVariablesMarkdown, replaceGeneratedBlock } from "../../src/config/envDocs.ts";
import { ENV_VARIABLES, PLANNED_ENV_VARIABLES } from "../../src/config/envVariables.ts";

// docs/configuration.md carries tables generated from the registry; this fails as soon as they drift.

const page = resolve(import.meta.dirname, "..", "..", "..", "..", "docs", "configuration.md");

describe("docs/configuration.md", () => {
  it("has the variables tables of the registry (run `npm run docs:env` when this fails)", () => {
    const text = readFileSync(page, "utf8");
    expect(replaceGeneratedBlock(text) === text, "docs/configuration.md is out of date: run `npm run docs:env`").toBe(
      true,
    );
  });

  it("lists every variable with its default and allowed values", () => {
    const tables = envVariablesMarkdown();
    for (const spec of Object.values(ENV_VARIABLES)) expect(tables).toContain(`| \`${spec.name}\``);
    for (const planned of PLANNED_ENV_VARIABLES) expect(tables).toContain(`| \`${planned.name}\``);
    expect(tables).toMatch(/\| `ASSISTANT_PORT` +\| `3876` +\| a whole number from 0 to 65535 +\| HTTP port/);
    // A placeholder in angle brackets would vanish as an HTML tag.
    expect(tables).toContain("auto, off or `<provider>:<model>`");
  });
});
