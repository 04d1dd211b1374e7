import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { dataPaths } from "../../src/config/paths.ts";
import { MAX_PLUGIN_READ_BYTES, pluginFileOp } from "../../src/plugins/pluginFiles.ts";
import { MAX_WRITE_BYTES } from "../../src/tools/fileWrite.ts";
import { daemonFiles } from "../../src/tools/policy/daemonFiles.ts";
import { type ToolContext, ToolDenied } from "../../src/tools/tool.ts";
import { tempDataDir } from "../helpers/daemon.ts";

// The plugin fs host function's request handling, the policy's answers given by the test: encodings, limits,
// bad requests and which policy question is asked. The manifest and policy refusals end to end are in daemon.test.ts.

const root = tempDataDir("assistant-plugin-files-");
const allowed = join(root, "allowed");
mkdirSync(join(allowed, "sub"), { recursive: true });
const paths = dataPaths(join(root, "data"));
mkdirSync(paths.dataDir);
afterAll(() => rmSync(root, { recursive: true, force: true }));

function access(permit: ToolContext["permit"] = vi.fn(async () => ({ effect: "allow" }) as never)) {
  const ctx = { journalPath: join(root, "journal.jsonl"), taskId: "t1", daemonFiles: daemonFiles({ paths }) };
  return { pluginId: "p", manifestFile: "/x/plugin.json", allowedPaths: [allowed], tool: "p__files", permit, ctx };
}
const op = (request: unknown, a = access()) => pluginFileOp(JSON.stringify(request), a);

describe("plugin fs requests", () => {
  it("asks the policy with read for read/list and write for write (the runner adds the tool's name)", async () => {
    const a = access();
    writeFileSync(join(allowed, "a.txt"), "A");
    await op({ op: "read", path: join(allowed, "a.txt") }, a);
    await op({ op: "list", path: allowed }, a);
    await op({ op: "write", path: join(allowed, "b.txt"), content: "B" }, a);
    expect(vi.mocked(a.permit).mock.calls.map(([r]) => r)).toEqual([
      { kind: "read", path: join(allowed, "a.txt") },
      { kind: "read", path: allowed },
      { kind: "write", path: join(allowed, "b.txt") },
    ]);
    const journal = JSON.parse(readFileSync(join(root, "journal.jsonl"), "utf8").trim());
    expect(journal).toMatchObject({ tool: "p__files", created: true, bytes: 1, task_id: "t1" });
  });

  it("passes a policy refusal on, and refuses paths outside allowed_paths before asking the policy", async () => {
    const denied = access(async () => {
      throw new ToolDenied("allowed_read_paths", "tools_policy.yaml", "not allowed");
    });
    await expect(op({ op: "read", path: join(allowed, "a.txt") }, denied)).rejects.toThrow("not allowed");
    const a = access();
    await expect(op({ op: "read", path: join(root, "journal.jsonl") }, a)).rejects.toMatchObject({
      name: "ToolDenied",
      rule: "plugin p allowed_paths",
      source: "/x/plugin.json",
    });
    await expect(op({ op: "list", path: `${allowed}-evil` }, a)).rejects.toThrow("is outside");
    expect(a.permit).not.toHaveBeenCalled();
  });

  it("reads UTF-8 text as is and anything else as base64, and writes base64 back byte for byte", async () => {
    const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe, 10]);
    writeFileSync(join(allowed, "bin"), bytes);
    const read = await op({ op: "read", path: join(allowed, "bin") });
    expect(read).toEqual({ ok: true, content: bytes.toString("base64"), encoding: "base64", bytes: 6 });
    writeFileSync(join(allowed, "t.txt"), "héllo");
    expect(await op({ op: "read", path: join(allowed, "t.txt") })).toMatchObject({ content: "héllo", bytes: 6 });
    const copy = join(allowed, "sub", "copy.bin");
    expect(await op({ op: "write", path: copy, content: bytes.toString("base64"), encoding: "base64" })).toEqual({
      ok: true,
      created: true,
      bytes: 6,
    });
    expect(readFileSync(copy).equals(bytes)).toBe(true);
  });

  it("answers limits and ordinary failures as results, not exceptions", async () => {
    writeFileSync(join(allowed, "big"), Buffer.alloc(MAX_PLUGIN_READ_BYTES + 1));
    expect(await op({ op: "read", path: join(allowed, "big") })).toMatchObject({ ok: false, error: /up to 2097152/ });
    const tooMuch = Buffer.alloc(MAX_WRITE_BYTES + 1).toString("base64");
    expect(await op({ op: "write", path: join(allowed, "w"), content: tooMuch, encoding: "base64" })).toMatchObject({
      ok: false,
      error: /larger than/,
    });
    expect(await op({ op: "read", path: join(allowed, "sub") })).toMatchObject({ ok: false, error: /a directory/ });
    expect(await op({ op: "list", path: join(allowed, "t.txt") })).toMatchObject({ error: /not a directory/ });
    expect(await op({ op: "write", path: join(allowed, "sub"), content: "x" })).toMatchObject({ error: /directory/ });
    for (const bad of ["not json", "[]", '{"op":"read"}', '{"op":"read","path":"/a","extra":1}']) {
      expect(await pluginFileOp(bad, access())).toMatchObject({ ok: false, error: /bad fs request/ });
    }
    expect(await op({ op: "read", path: "a.txt" })).toMatchObject({ error: "path must be absolute: a.txt" });
    expect(await op({ op: "read", path: `${allowed}/\0x` })).toMatchObject({ ok: false });
  });

  it("refuses to read a hard link to one of the daemon's secrets, whatever the policy allowed", async () => {
    writeFileSync(paths.authToken, "secret-token-value");
    const link = join(allowed, "innocent.txt");
    linkSync(paths.authToken, link);
    const error = await op({ op: "read", path: link }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolDenied);
    expect((error as ToolDenied).rule).toMatch(/^protected: daemon data: .*hard link/);
    expect(JSON.stringify(error)).not.toContain("secret-token-value");
  });
});
