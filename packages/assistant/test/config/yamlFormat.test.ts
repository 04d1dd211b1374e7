import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { alignDefaultRoute } from "../../src/config/defaults.ts";
import { toolsPolicySchema } from "../../src/config/schemas/toolsPolicy.ts";
import { addToYamlList, setYamlValue, updateYamlFile } from "../../src/config/yamlDocument.ts";
import { detectIndent, keepOriginalLines, preserveFormatting } from "../../src/config/yamlFormat.ts";
import { tempData } from "./helpers.ts";

describe("formatting kept across edits", () => {
  it("keeps 4-space indentation, unindented lists, runs of blank lines and key-line comments", () => {
    const data = tempData();
    const text = `allowed_commands:   # what may run
- git     # vcs
- ls


tool_profiles:
    reader: [ read_file,list_dir ]   # spacing as typed
browser_enabled: false
`;
    const file = data.write("tools_policy.yaml", text);
    updateYamlFile(
      file,
      (doc) => {
        setYamlValue(doc, "browser_enabled", true);
        addToYamlList(doc, "allowed_commands", "rg");
        addToYamlList(doc, "allowed_commands", "git"); // already there: no change
      },
      toolsPolicySchema,
    );
    expect(readFileSync(file, "utf8")).toBe(text.replace("- ls\n", "- ls\n- rg\n").replace("false", "true"));
  });

  it("detects the indentation the file uses", () => {
    expect(detectIndent("a:\n    b: 1\n")).toEqual({ indent: 4, indentSeq: true });
    expect(detectIndent("a:\n- 1\nb:\n   c: 2\n")).toEqual({ indent: 3, indentSeq: false });
    expect(detectIndent("")).toEqual({ indent: 2, indentSeq: true });
  });

  it("falls back to the plain rendering when the user's lines would change the data", () => {
    // Same characters apart from spaces, but the spaces are inside a quoted string: the old line must not come back.
    const original = 'name: "a b"\n';
    const rendered = 'name: "ab"\n';
    expect(keepOriginalLines(original, rendered)).toBe(original);
    expect(preserveFormatting(original, rendered)).toBe(rendered);
  });

  it("keeps Windows line endings", () => {
    expect(preserveFormatting("a:   1\r\nb: 2\r\n", "a: 1\nb: 3\n")).toBe("a:   1\r\nb: 3\r\n");
  });

  it("keeps a 4-space file's layout when the default route is aligned", () => {
    const data = tempData();
    const file = data.write(
      "llm_router.yaml",
      `providers:
    local_server:
        base_url: http://localhost:11434    # my box


task_types:
    conversation:
        primary:
            provider: local_server # fast one
            model: llama3
        fallback:
        -   { provider: assistant_core, model: core }
        -   { provider: cloud_a, model: backup } # paid
    code_generation: # untouched
        primary: { provider: cloud_a, model: coder }
`,
    );
    alignDefaultRoute(file);
    expect(readFileSync(file, "utf8")).toBe(`providers:
    local_server:
        base_url: http://localhost:11434    # my box


task_types:
    conversation:
        primary:
            provider: assistant_embedded
            model: default
        fallback:
        - provider: local_server # fast one
          model: llama3
        -   { provider: cloud_a, model: backup } # paid
        - provider: assistant_core
          model: core
    code_generation: # untouched
        primary: { provider: cloud_a, model: coder }
`);
  });
});
