import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readSettings } from "../../src/config/settings.ts";
import { EventLog } from "../../src/events/eventLog.ts";
import { createPluginServices, type PluginServices } from "../../src/plugins/services.ts";
import { openDatabase } from "../../src/store/database.ts";
import { type ToolHarness, toolHarness } from "../tools/harness.ts";
import { buildTestPlugin } from "./buildFixtures.ts";

// Two overlapping calls of one plugin, each with its own policy outcome: the second call is queued behind the
// first inside the plugin runtime, and each call's file request must be judged with its own tool's permissions.
// The calls go through the real tool runner, policy file and persistent decisions, with a plugin compiled from
// AssemblyScript; the plugin instance is fresh, so both calls wait for it to load and then run back to back.

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const fileTool = (name: string) => ({
  name,
  description: "Read a file through the plugin's fs host function",
  export: "file_op",
  parameters: {
    type: "object",
    properties: { op: { type: "string" }, path: { type: "string" } },
    required: ["op", "path"],
  },
});

/** A harness whose tool registry offers the `files` plugin's read_a and read_b (same export, two tools). */
async function withPlugin(): Promise<{ h: ToolHarness; plugins: PluginServices; shared: string }> {
  const h = toolHarness();
  const shared = join(h.root, "shared");
  mkdirSync(shared);
  const dir = join(h.paths.pluginsDir, "files");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plugin.wasm"), await buildTestPlugin("echo"));
  writeFileSync(
    join(dir, "plugin.json"),
    JSON.stringify({
      id: "files",
      name: "Files",
      version: "1.0.0",
      kind: "tool",
      exports: ["file_op"],
      tools: [fileTool("read_a"), fileTool("read_b")],
      capabilities: { allowed_paths: [shared] },
    }),
  );
  const db = openDatabase(h.paths.database);
  const plugins = createPluginServices({
    db,
    paths: h.paths,
    settings: readSettings({}),
    events: new EventLog(db),
    logger: { warn: () => {}, info: () => {} },
    tools: h.tools.registry,
    secret: () => null,
  });
  closers.push(() => {
    db.close();
  });
  closers.push(() => plugins.registry.close());
  return { h, plugins, shared };
}

describe("overlapping calls of one plugin", () => {
  it.each([["the allowed call first"], ["the denied call first"]])(
    "judge each call's file request with its own tool context (%s)",
    async (order) => {
      const { h, plugins, shared } = await withPlugin();
      const note = join(shared, "note.txt");
      writeFileSync(note, "remember the milk");
      h.setPolicy({ allowed_read_paths: [shared], require_approval: [] });
      // read_b may not read there: a persistent deny decision for that tool only
      const decision = h.approvals.decisions.create({ tool: "files__read_b", scope: shared, effect: "deny" });

      const read = (tool: string) => h.invoke(tool, { op: "read", path: note });
      const [a, b] =
        order === "the allowed call first"
          ? await Promise.all([read("files__read_a"), read("files__read_b")])
          : await Promise.all([read("files__read_b"), read("files__read_a")]).then(([b2, a2]) => [a2, b2] as const);

      expect(a.status, a.output).toBe("ok");
      expect(a.output).toContain('"content":"remember the milk"');
      expect(b).toMatchObject({ status: "denied", rule: `decision #${decision.id}` });
      expect(b.output).not.toContain("remember the milk");
      expect(plugins.reputation.get("files")).toMatchObject({ successes: 1, denied: 1 });
    },
  );
});
