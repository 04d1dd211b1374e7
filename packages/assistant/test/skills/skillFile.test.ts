import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SkillRegistry } from "../../src/skills/registry.ts";
import { parseSkillJson, parseSkillMd, SkillInvalid } from "../../src/skills/skillFile.ts";
import { tempDataDir } from "../helpers/daemon.ts";

// SKILL.md and skill.json as the daemon reads them, and the registry's scan: valid skills load whole, invalid
// ones are listed with the reason and skipped, the prompt index carries names and descriptions only.

const skillMd = (fm: string, body = "Do the thing step by step.") => `---\n${fm}\n---\n${body}\n`;

describe("SKILL.md", () => {
  it("reads the frontmatter fields and the body", () => {
    const doc = parseSkillMd(
      skillMd(
        "name: pdf-tools\ndescription: Work with PDF files.\nlicense: MIT\ncompatibility: needs poppler\nmetadata:\n  version: 1.2\nallowed-tools: Bash(pdftotext:*) Bash(qpdf) Read",
        "# PDF\nUse pdftotext.",
      ),
      "pdf-tools",
    );
    expect(doc).toMatchObject({
      name: "pdf-tools",
      description: "Work with PDF files.",
      license: "MIT",
      compatibility: "needs poppler",
      metadata: { version: "1.2" },
      commands: ["pdftotext", "qpdf"],
      body: "# PDF\nUse pdftotext.",
    });
  });

  it.each([
    ["no frontmatter", "# Just markdown\n", "does not start with a `---`"],
    ["unclosed frontmatter", "---\nname: a\ndescription: b\n", "no closing `---`"],
    ["missing name", skillMd("description: x"), "`name` is required"],
    ["missing description", skillMd("name: a"), "`description` is required"],
    ["empty description", skillMd("name: a\ndescription: '  '"), "`description` is empty"],
    ["uppercase name", skillMd("name: PDF\ndescription: x"), "lowercase"],
    ["double hyphen", skillMd("name: a--b\ndescription: x"), "lowercase"],
    ["long description", skillMd(`name: a\ndescription: ${"x".repeat(1025)}`), "longer than 1024"],
    ["invalid YAML", skillMd("name: [a\ndescription: x"), "not valid YAML"],
    ["duplicate keys", skillMd("name: a\nname: b\ndescription: x"), "not valid YAML"],
    ["empty body", skillMd("name: a\ndescription: x", ""), "no instructions"],
    ["oversized", skillMd("name: a\ndescription: x", "y".repeat(300 * 1024)), "larger than 256 KiB"],
  ])("refuses %s", (_label, text, reason) => {
    expect(() => parseSkillMd(text, null)).toThrow(SkillInvalid);
    expect(() => parseSkillMd(text, null)).toThrow(reason);
  });

  it("requires the folder name to equal the skill name", () => {
    expect(() => parseSkillMd(skillMd("name: alpha\ndescription: x"), "beta")).toThrow('its folder is "beta"');
  });

  it("reads skill.json catalog fields and refuses bad ones", () => {
    expect(parseSkillJson(JSON.stringify({ id: "x", version: "1.0.0", tags: ["a"], featured: true }))).toMatchObject({
      version: "1.0.0",
      featured: true,
    });
    expect(() => parseSkillJson("{nope")).toThrow("not valid JSON");
    expect(() => parseSkillJson(JSON.stringify({ tags: "a" }))).toThrow("skill.json: tags");
    expect(() => parseSkillJson(JSON.stringify({ routing_rules: [{ task_type: "code" }] }))).toThrow(
      "keywords or a pattern",
    );
  });
});

describe("skill registry", () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDataDir("assistant-skills-");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const addSkill = (folder: string, md: string, extra: Record<string, string> = {}) => {
    mkdirSync(join(dir, folder), { recursive: true });
    writeFileSync(join(dir, folder, "SKILL.md"), md);
    for (const [path, content] of Object.entries(extra)) {
      mkdirSync(join(dir, folder, path, ".."), { recursive: true });
      writeFileSync(join(dir, folder, path), content);
    }
  };

  it("loads valid skills, lists invalid ones with the reason, and never half-loads", () => {
    addSkill("notes", skillMd("name: notes\ndescription: Take meeting notes.", "SECRET-BODY-MARKER"), {
      "references/format.md": "# Format",
      "scripts/run.sh": "echo hi",
    });
    addSkill("broken", skillMd("name: other\ndescription: x"));
    addSkill("badjson", skillMd("name: badjson\ndescription: x"), { "skill.json": "{" });
    mkdirSync(join(dir, "empty"));
    mkdirSync(join(dir, ".install-tmp"));
    const registry = new SkillRegistry({ dir });
    expect(registry.list().map((s) => s.name)).toEqual(["notes"]);
    expect(registry.list()[0]).toMatchObject({ files: ["references/format.md", "scripts/run.sh"] });
    expect(registry.invalid()).toEqual([
      { folder: "badjson", reason: expect.stringContaining("skill.json is not valid JSON") },
      { folder: "broken", reason: expect.stringContaining('its folder is "broken"') },
      { folder: "empty", reason: expect.stringContaining("no SKILL.md") },
    ]);
    // Progressive disclosure: the prompt index has the description, never the body.
    expect(registry.index()).toContain("- notes: Take meeting notes.");
    expect(registry.index()).not.toContain("SECRET-BODY-MARKER");
    expect(registry.get("notes")!.body).toBe("SECRET-BODY-MARKER");
  });

  it("keeps the prompt index within its budget however many skills are installed", () => {
    const long = `Plan a trip ${"with trains, hotels and museums ".repeat(30)}`.slice(0, 1000);
    for (let i = 0; i < 40; i++)
      addSkill(
        `skill${String(i).padStart(2, "0")}`,
        skillMd(`name: skill${String(i).padStart(2, "0")}\ndescription: ${long}`),
      );
    const index = new SkillRegistry({ dir }).index();
    expect(index.length).toBeLessThanOrEqual(1200);
    expect(index).toMatch(/^- skill00: Plan a trip with trains.*…$/m);
    expect(index).not.toContain(long);
    // The skills that do not fit are still named, or counted.
    expect(index).toMatch(/- (also: .*skill39|and \d+ more)/);
  });

  it("reads only listed files of a skill, and picks up changes on reload", () => {
    addSkill("notes", skillMd("name: notes\ndescription: x"), { "references/a.md": "A" });
    writeFileSync(join(dir, "outside.txt"), "outside");
    symlinkSync(join(dir, "outside.txt"), join(dir, "notes", "references", "link.md"));
    const registry = new SkillRegistry({ dir });
    expect(registry.readFile("notes", "references/a.md")).toBe("A");
    expect(() => registry.readFile("notes", "../outside.txt")).toThrow("has no file");
    expect(() => registry.readFile("notes", "references/link.md")).toThrow("has no file");
    expect(() => registry.readFile("nope", "references/a.md")).toThrow("no skill named nope");
    addSkill("later", skillMd("name: later\ndescription: y"));
    expect(registry.get("later")).toBeUndefined();
    expect(registry.reload().loaded).toEqual(["later", "notes"]);
  });

  it("uninstalls valid and invalid skills by folder name and refuses paths", () => {
    addSkill("notes", skillMd("name: notes\ndescription: x"));
    addSkill("broken", "no frontmatter");
    const registry = new SkillRegistry({ dir });
    registry.uninstall("notes");
    registry.uninstall("broken");
    expect(registry.list()).toEqual([]);
    expect(registry.invalid()).toEqual([]);
    expect(() => registry.uninstall("../etc")).toThrow("is not a skill name");
    expect(() => registry.uninstall("ghost")).toThrow("no skill named ghost");
  });
});
