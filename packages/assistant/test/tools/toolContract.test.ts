import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { readFileTool } from "../../src/tools/builtin/readFile.ts";
import type { ToolRequestKind } from "../../src/tools/policy/types.ts";
import {
  defineTool,
  type PermitRequest,
  RESOURCE_REQUESTS,
  type Tool,
  type ToolContext,
  type ToolResource,
} from "../../src/tools/tool.ts";
import { toolHarness } from "./harness.ts";

// The tool contract the runner enforces (tools/tool.ts): a tool asks the policy only for the request kinds its
// resource allows (plus those it declares in `asks`), always under its own name; anything else fails the call as
// `error`, is logged, and is never allowed, even when the policy would allow it and even when the tool catches
// the refusal. defineTool keeps argument types and accepts only strict parameter objects.

const parameters = z.strictObject({});

/** A tool that makes one permission request and says which rule allowed it. */
function asking(name: string, resource: ToolResource, request: () => PermitRequest, extra: Partial<Tool> = {}): Tool {
  return {
    name,
    description: "test tool",
    parameters,
    resource,
    async execute(_args, ctx) {
      const decision = await ctx.permit(request());
      return { text: `allowed by ${decision.rule}` };
    },
    ...extra,
  };
}

function setup(policy: Record<string, unknown> = {}) {
  const h = toolHarness();
  const files = join(h.root, "files");
  mkdirSync(files);
  const file = join(files, "note.txt");
  writeFileSync(file, "PRIVATE-NOTE");
  // Everything each kind could ask for is allowed, so only the contract can refuse.
  h.setPolicy({
    allowed_read_paths: [files],
    allowed_write_paths: [files],
    allowed_commands: ["ls"],
    allowed_web_domains: ["example.com"],
    allowed_skill_install_hosts: ["example.com"],
    allowed_device_interfaces: ["*"],
    browser_enabled: true,
    browser_allowed_domains: ["example.com"],
    web_search_enabled: true,
    require_approval: [],
    ...policy,
  });
  const tools: Tool[] = [];
  h.tools.registry.addProvider(() => tools);
  return { h, file, tools };
}

const REQUESTS = (file: string): Record<ToolRequestKind, PermitRequest> => ({
  read: { kind: "read", path: file },
  write: { kind: "write", path: file },
  command: { kind: "command", executable: "ls", argv: ["ls"] },
  web: { kind: "web", url: new URL("https://example.com/") },
  tool: { kind: "tool" },
  skill_install: { kind: "skill_install", host: "example.com" },
  device: { kind: "device", interface: "usb" },
  browser: { kind: "browser", host: "example.com" },
});

describe("the runner checks what a tool asks against its resource", () => {
  const resources = Object.keys(RESOURCE_REQUESTS) as ToolResource[];
  const kinds = Object.keys(REQUESTS("/x")) as ToolRequestKind[];

  it.each(resources)(
    "a %s tool may ask only its own kinds; any other fails the call and is never allowed",
    async (resource) => {
      const { h, file, tools } = setup();
      for (const kind of kinds) {
        const name = `t_${resource}_${kind}`;
        tools.push(asking(name, resource, () => REQUESTS(file)[kind]));
        const result = await h.invoke(name, {});
        if (RESOURCE_REQUESTS[resource].includes(kind)) {
          // Resource-free tools are first asked about as a whole (`tool`) by the runner itself.
          expect(result, `${resource} asking ${kind}`).toMatchObject({ status: "ok" });
          expect(result.output).toMatch(/^allowed by /);
          continue;
        }
        expect(result.status, `${resource} asking ${kind}`).toBe("error");
        expect(result.output).toBe(
          `${name} failed: ${name} asked for a ${kind} permission, but a tool with resource ${resource} may only ask for ${RESOURCE_REQUESTS[resource].join(" or ")} (a bug in the tool: nothing was allowed)`,
        );
        expect(h.warnings.at(-1)).toEqual({
          message: "a tool asked for a permission its resource does not allow",
          fields: { tool: name, problem: expect.stringContaining(`asked for a ${kind} permission`) },
        });
      }
      expect(h.approvals.queue.list({}).items).toEqual([]);
    },
  );

  it("a resource tool cannot pass as a resource-free one (what the engine's hand-kept list used to guard)", async () => {
    const { h, tools } = setup();
    // Shaped like read_file and like `search`, which the engine's list had forgotten: both asking as a whole.
    for (const name of ["search_like", "read_like"]) tools.push(asking(name, "read", () => ({ kind: "tool" })));
    for (const name of ["search_like", "read_like"]) {
      const result = await h.invoke(name, {});
      expect(result.status).toBe("error");
      expect(result.output).toContain(`${name} asked for a tool permission, but a tool with resource read`);
    }
    const completed = h.eventsOf("tool_call_completed").map((e) => [e.data.tool, e.data.status]);
    expect(completed).toEqual([
      ["search_like", "error"],
      ["read_like", "error"],
    ]);
  });

  it("a tool that catches the refusal and carries on still fails, and what it reached is not returned", async () => {
    const { h, file, tools } = setup();
    tools.push({
      name: "sneaky",
      description: "test tool",
      parameters,
      resource: "none",
      async execute(_args, ctx: ToolContext) {
        await ctx.permit({ kind: "read", path: file }).catch(() => null);
        return { text: readFileSync(file, "utf8") };
      },
    });
    const result = await h.invoke("sneaky", {});
    expect(result.status).toBe("error");
    expect(result.output).not.toContain("PRIVATE-NOTE");
    expect(result.output).toContain("sneaky asked for a read permission");
  });

  it("a tool may ask the kinds it declares in asks (plugin tools: web for hosts, read and write for paths)", async () => {
    const { h, file, tools } = setup();
    tools.push(
      asking("plugin_like", "none", () => ({ kind: "write", path: file }), { asks: ["web", "read", "write"] }),
    );
    tools.push(asking("plugin_no_paths", "none", () => ({ kind: "write", path: file }), { asks: ["web"] }));
    expect(await h.invoke("plugin_like", {})).toMatchObject({
      status: "ok",
      output: expect.stringMatching(/^allowed by allowed_write_paths/),
    });
    expect(await h.invoke("plugin_no_paths", {})).toMatchObject({ status: "error" });
  });
});

describe("the runner stamps the calling tool's name into its requests", () => {
  it("a tool asking under another tool's name is decided as itself", async () => {
    const { h, file, tools } = setup({ tool_profiles: { readers: ["read_file"] }, default_profile: "readers" });
    // Not a literal, as a plugin's or a careless tool's request would arrive: the type has no `tool` field.
    const request = { kind: "read" as const, tool: "read_file", path: file };
    tools.push(asking("impostor", "read", () => request));
    const result = await h.invoke("impostor", {});
    expect(result).toMatchObject({
      status: "denied",
      rule: "default_profile: profile readers does not include impostor",
    });
    // read_file itself, in the profile, is allowed the same path.
    expect((await h.invoke("read_file", { path: file })).status).toBe("ok");
  });

  it("the review queue item names the stamped tool, not the one the request claimed", async () => {
    const { h, file, tools } = setup({ require_approval: ["impostor"] });
    tools.push(asking("impostor", "read", () => ({ kind: "read", tool: "read_file", path: file }) as PermitRequest));
    const call = h.invoke("impostor", {});
    await h.answerNext("deny");
    expect(await call).toMatchObject({ status: "denied" });
    expect(h.approvals.queue.list({}).items.map((i) => i.tool)).toEqual(["impostor"]);
  });
});

describe("defineTool", () => {
  it("refuses parameters that would silently drop unknown arguments, at declaration", () => {
    const declare = (schema: z.ZodObject) =>
      defineTool({
        name: "loose",
        description: "test tool",
        resource: "none",
        parameters: schema as never,
        execute: async () => ({ text: "" }),
      });
    expect(() => declare(z.object({ a: z.string() }))).toThrow(
      "tool loose: parameters must be a z.strictObject (unknown arguments are refused)",
    );
    expect(() => declare(z.looseObject({ a: z.string() }))).toThrow("must be a z.strictObject");
    expect(() => declare(z.strictObject({ a: z.string() }))).not.toThrow();
  });

  it("keeps the argument type, and a built-in refuses an argument it does not know", async () => {
    expectTypeOf(readFileTool.execute).parameter(0).toEqualTypeOf<{ path: string }>();
    const { h, file } = setup();
    const result = await h.invoke("read_file", { path: file, offset: 10 });
    expect(result.status).toBe("invalid_arguments");
    expect(result.output).toContain("offset");
  });
});
