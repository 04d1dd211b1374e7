import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventLog } from "../../../src/events/eventLog.ts";
import { type Db, openDatabase } from "../../../src/store/database.ts";
import { type QueueRequest, ReviewQueue } from "../../../src/tools/approvals/queue.ts";
import { api as apiCall, startDaemon, type TestDaemon, tempDataDir } from "../../helpers/daemon.ts";
import { runCli } from "../../setup/helpers.ts";

// The permissions surface end to end: a real daemon serves /api/permissions/* and `assistant permissions ...`.
// No route creates queue items (tool calls do, later), so the test writes them into the daemon's own assistant.db
// through a second connection (WAL lets it), with the ReviewQueue class the daemon uses.

let daemon: TestDaemon;
let db: Db;
let queue: ReviewQueue;
let events: EventLog;

beforeAll(async () => {
  daemon = await startDaemon({ ASSISTANT_EMBEDDED_MODEL_PATH: join(tempDataDir(), "no-model.gguf") });
  db = openDatabase(join(daemon.dataDir, "assistant.db"));
  events = new EventLog(db);
  queue = new ReviewQueue(db, { events });
});
afterAll(async () => {
  db?.close();
  await daemon?.stop();
  if (daemon) rmSync(daemon.dataDir, { recursive: true, force: true });
});

const api = (method: string, path: string, body?: unknown, token: string | null = daemon.token) =>
  apiCall(daemon, method, path, body, token);

const call = (tool = "run_command"): QueueRequest => ({
  tool,
  arguments: { command: "git push --force" },
  session_id: "s-http",
  rule: `require_approval: ${tool}`,
});

const cli = (args: string[], dataDir = daemon.dataDir, input?: string) =>
  runCli(["permissions", ...args], { env: { ASSISTANT_DATA_DIR: dataDir }, ...(input !== undefined ? { input } : {}) });

describe("review queue over HTTP", () => {
  it("lists newest first, filters by status and pages with next_cursor", async () => {
    const ids = [queue.request(call("tool_a")).id, queue.request(call("tool_b")).id, queue.request(call("tool_c")).id];
    const denied = await api("POST", `/api/permissions/queue/${ids[1]}/deny`, { note: "no" });
    expect(denied.status).toBe(200);

    const first = await api("GET", "/api/permissions/queue?limit=2");
    expect(first.status).toBe(200);
    const page1 = first.json();
    expect(page1.items.map((i: { id: string }) => i.id)).toEqual([ids[2], ids[1]]);
    expect(page1.next_cursor).toEqual(expect.any(String));
    const page2 = (await api("GET", `/api/permissions/queue?limit=2&cursor=${page1.next_cursor}`)).json();
    expect(page2.items[0].id).toBe(ids[0]);

    const pending = (await api("GET", "/api/permissions/queue?status=pending")).json();
    const pendingIds = pending.items.map((i: { id: string }) => i.id);
    expect(pendingIds).toContain(ids[0]);
    expect(pendingIds).toContain(ids[2]);
    expect(pendingIds).not.toContain(ids[1]);
    expect(pending.items.every((i: { status: string }) => i.status === "pending")).toBe(true);
    const deniedList = (await api("GET", "/api/permissions/queue?status=denied")).json();
    expect(deniedList.items).toEqual([expect.objectContaining({ id: ids[1], status: "denied", note: "no" })]);
  });

  it("refuses an unknown status, a bad limit and a bad cursor with 400", async () => {
    for (const query of ["status=waiting", "limit=0", "limit=501", "cursor=%21%21"]) {
      const res = await api("GET", `/api/permissions/queue?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json().error.code).toBe("invalid_request");
    }
    expect((await api("GET", "/api/permissions/queue?status=waiting")).json().error.details.field).toBe("query.status");
  });

  it("gets one item; an unknown id is 404", async () => {
    const item = queue.request(call());
    const res = await api("GET", `/api/permissions/queue/${item.id}`);
    expect(res.status).toBe(200);
    expect(res.json()).toEqual(item);
    const missing = await api("GET", "/api/permissions/queue/no-such-item");
    expect(missing.status).toBe(404);
    expect(missing.json().error.code).toBe("not_found");
    expect((await api("POST", "/api/permissions/queue/no-such-item/approve")).status).toBe(404);
  });

  it("approves without a body, then refuses to act again with 409; the daemon emits approval_resolved", async () => {
    const item = queue.request(call());
    const approved = await api("POST", `/api/permissions/queue/${item.id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.json()).toMatchObject({ id: item.id, status: "approved", note: null });
    expect(approved.json().resolved_at).toEqual(expect.any(String));
    for (const action of ["approve", "deny", "expire"]) {
      const again = await api("POST", `/api/permissions/queue/${item.id}/${action}`, { note: "again" });
      expect(again.status).toBe(409);
      expect(again.json().error).toMatchObject({ code: "conflict", details: { id: item.id, status: "approved" } });
      expect(again.json().error.message).toContain("already approved");
    }
    const resolved = events.list({ kinds: ["approval_resolved"], limit: 1000 }).filter((e) => e.data.id === item.id);
    expect(resolved).toEqual([
      expect.objectContaining({
        session_id: "s-http",
        data: { id: item.id, tool: "run_command", status: "approved", note: null, by: "operator" },
      }),
    ]);
  });

  it("denies and expires with a note", async () => {
    const a = queue.request(call());
    const b = queue.request(call());
    const denied = await api("POST", `/api/permissions/queue/${a.id}/deny`, { note: "not on main" });
    expect(denied.json()).toMatchObject({ status: "denied", note: "not on main" });
    const expired = await api("POST", `/api/permissions/queue/${b.id}/expire`, {});
    expect(expired.json()).toMatchObject({ status: "expired", note: null });
  });

  it("refuses malformed bodies with 400 and leaves the item pending", async () => {
    const item = queue.request(call());
    const bad = [{ note: 5 }, { note: "x".repeat(2001) }, { note: "fine", extra: true }, "[1, 2", '"just a string"'];
    for (const body of bad) {
      const res = await api("POST", `/api/permissions/queue/${item.id}/approve`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json().error.code).toBe("invalid_request");
    }
    expect((await api("GET", `/api/permissions/queue/${item.id}`)).json().status).toBe("pending");
  });

  it("requires authentication on every permissions route", async () => {
    for (const [method, path] of [
      ["GET", "/api/permissions/queue"],
      ["GET", "/api/permissions/queue/x"],
      ["POST", "/api/permissions/queue/x/approve"],
      ["GET", "/api/permissions/decisions"],
      ["POST", "/api/permissions/decisions"],
      ["DELETE", "/api/permissions/decisions/x"],
      ["GET", "/api/permissions/mode"],
      ["POST", "/api/permissions/mode"],
    ] as const) {
      const none = await api(method, path, undefined, null);
      expect(none.status, `${method} ${path}`).toBe(401);
      expect(none.json().error.code).toBe("unauthorized");
      expect((await api(method, path, undefined, "wrong-token")).status).toBe(401);
    }
  });
});

describe("decisions and mode over HTTP", () => {
  it("creates (201), lists, refuses duplicates (409) and deletes decisions", async () => {
    const created = await api("POST", "/api/permissions/decisions", {
      tool: "run_command",
      scope: "git",
      effect: "allow",
    });
    expect(created.status).toBe(201);
    const decision = created.json();
    expect(decision).toMatchObject({ tool: "run_command", scope: "git", effect: "allow", id: expect.any(String) });

    const dup = await api("POST", "/api/permissions/decisions", { tool: "run_command", scope: "git", effect: "deny" });
    expect(dup.status).toBe(409);
    expect(dup.json().error).toMatchObject({ code: "conflict", details: { id: decision.id } });

    const list = (await api("GET", "/api/permissions/decisions")).json();
    expect(list).toEqual({ items: [decision], next_cursor: null });

    const deleted = await api("DELETE", `/api/permissions/decisions/${decision.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.json()).toEqual({ id: decision.id, deleted: true });
    expect((await api("DELETE", `/api/permissions/decisions/${decision.id}`)).status).toBe(404);
    expect((await api("GET", "/api/permissions/decisions")).json().items).toEqual([]);
  });

  it("refuses invalid decisions with 400 naming the field", async () => {
    const cases: Array<[unknown, string]> = [
      [{ tool: "Bad Tool", scope: "git", effect: "allow" }, "body.tool"],
      [{ tool: "run_command", scope: "", effect: "allow" }, "body.scope"],
      [{ tool: "run_command", scope: "a\u0000b", effect: "allow" }, "body.scope"],
      [{ tool: "run_command", scope: "git", effect: "maybe" }, "body.effect"],
      [{ tool: "run_command", scope: "git" }, "body.effect"],
      [{ tool: "run_command", scope: "git", effect: "allow", extra: 1 }, "body"],
    ];
    for (const [body, field] of cases) {
      const res = await api("POST", "/api/permissions/decisions", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json().error.details.field).toBe(field);
    }
    expect((await api("POST", "/api/permissions/decisions")).status).toBe(400);
  });

  it("reads and sets the approval mode; an unknown mode is 400", async () => {
    expect((await api("GET", "/api/permissions/mode")).json()).toEqual({ mode: "ask_me" });
    const set = await api("POST", "/api/permissions/mode", { mode: "allow_all" });
    expect(set.status).toBe(200);
    expect(set.json()).toEqual({ mode: "allow_all" });
    expect((await api("GET", "/api/permissions/mode")).json()).toEqual({ mode: "allow_all" });
    for (const body of [{ mode: "yolo" }, {}, { mode: "ask_me", extra: 1 }]) {
      expect((await api("POST", "/api/permissions/mode", body)).status, JSON.stringify(body)).toBe(400);
    }
    await api("POST", "/api/permissions/mode", { mode: "ask_me" });
    expect((await api("GET", "/api/permissions/mode")).json()).toEqual({ mode: "ask_me" });
  });
});

describe("assistant permissions (CLI)", () => {
  it("queue list prints JSON and text, with a status filter", async () => {
    const item = queue.request({ ...call("cli_tool"), arguments: { command: "make deploy" } });
    const json = await cli(["queue", "list", "--status", "pending", "--json"]);
    expect(json.code, json.stderr).toBe(0);
    const items = json.json();
    expect(items.every((i: { status: string }) => i.status === "pending")).toBe(true);
    expect(items[0]).toMatchObject({ id: item.id, tool: "cli_tool", status: "pending" });

    const text = await cli(["queue", "list"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`${item.id}  pending   cli_tool  (rule: require_approval: cli_tool, expires `);
    expect(text.stdout).toContain('arguments: {"command":"make deploy"}');

    const bad = await cli(["queue", "list", "--status", "waiting"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'error: --status must be one of pending, approved, denied, expired (got "waiting")\n(run `assistant permissions queue list --help` for its usage)\n',
    );
  });

  it("queue approve and deny change the item (json and text); a final item is refused", async () => {
    const a = queue.request(call());
    const b = queue.request(call());
    const approved = await cli(["queue", "approve", a.id, "--note", "ok by me", "--json"]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.json()).toMatchObject({ id: a.id, status: "approved", note: "ok by me" });

    const denied = await cli(["queue", "deny", b.id]);
    expect(denied.code, denied.stderr).toBe(0);
    expect(denied.stdout.trim()).toBe(`${b.id} denied (run_command)`);

    const again = await cli(["queue", "approve", b.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already denied");
    const unknown = await cli(["queue", "deny", "no-such-item"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no review queue item no-such-item");
  });

  it("queue approve --always approves and records the allow decision for the item's tool and scope", async () => {
    const item = queue.request({ ...call(), scope: "git" });
    const approved = await cli(["queue", "approve", item.id, "--always"]);
    expect(approved.code, approved.stderr).toBe(0);
    const decision = (await api("GET", "/api/permissions/decisions"))
      .json()
      .items.find((d: { scope: string }) => d.scope === "git");
    expect(decision).toMatchObject({ tool: "run_command", effect: "allow" });
    expect(approved.stdout).toBe(
      `${item.id} approved (run_command)\nfrom now on run_command on git runs without asking (decision ${decision.id})\n`,
    );
    // The same again finds the decision instead of failing on a duplicate.
    const second = queue.request({ ...call(), scope: "git" });
    expect((await cli(["queue", "approve", second.id, "--always", "--json"])).json().decision.id).toBe(decision.id);
    await api("DELETE", `/api/permissions/decisions/${decision.id}`);

    // A deny decision for the scope wins: nothing is approved. An item that does not say its scope cannot be.
    const denyRule = (
      await api("POST", "/api/permissions/decisions", { tool: "run_command", scope: "curl", effect: "deny" })
    ).json();
    const blocked = queue.request({ ...call(), scope: "curl" });
    const refused = await cli(["queue", "approve", blocked.id, "--always"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`a deny decision for run_command curl exists (id ${denyRule.id})`);
    expect((await api("GET", `/api/permissions/queue/${blocked.id}`)).json().status).toBe("pending");
    const old = queue.request(call());
    const unknown = await cli(["queue", "approve", old.id, "--always"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("does not say what it is about");
    await api("DELETE", `/api/permissions/decisions/${denyRule.id}`);
  });

  it("decisions add, list, delete and mode", async () => {
    const added = await cli(["decisions", "add", "web_fetch", "example.org", "deny", "--json"]);
    expect(added.code, added.stderr).toBe(0);
    const decision = added.json();
    expect(decision).toMatchObject({ tool: "web_fetch", scope: "example.org", effect: "deny" });
    const list = await cli(["decisions", "list"]);
    expect(list.stdout).toContain(`${decision.id}  deny   web_fetch  example.org`);
    const bad = await cli(["decisions", "add", "web_fetch", "example.org", "perhaps"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("effect");
    const deleted = await cli(["decisions", "delete", decision.id]);
    expect(deleted.stdout.trim()).toBe(`deleted ${decision.id}`);
    expect((await cli(["decisions", "list"])).stdout.trim()).toBe("no persistent decisions");

    expect((await cli(["mode"])).stdout.trim()).toBe("approval mode: ask_me");
    // allow_all says what it does and asks; only a yes (or --yes) turns it on.
    for (const answer of ["", "n\n"]) {
      const refused = await cli(["mode", "allow_all"], daemon.dataDir, answer);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        "allow_all: every tool call that require_approval would queue for your review runs at once",
      );
      expect(refused.stderr).toContain("Turn it on? [y/N]");
      expect(refused.stderr).toContain("the approval mode is unchanged (ask_me); `--yes` confirms without asking");
      expect((await api("GET", "/api/permissions/mode")).json()).toEqual({ mode: "ask_me" });
    }
    const confirmed = await cli(["mode", "allow_all"], daemon.dataDir, "y\n");
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(confirmed.stdout.trim()).toBe("approval mode: allow_all");
    expect((await cli(["mode", "ask_me"])).stdout.trim()).toBe("approval mode: ask_me");
    expect((await cli(["mode", "allow_all", "--yes", "--json"])).json()).toEqual({ mode: "allow_all" });
    expect((await cli(["mode", "ask_me"])).stdout.trim()).toBe("approval mode: ask_me");
    const wrong = await cli(["mode", "whatever"]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("mode must be ask_me or allow_all");
  });

  it("an allow decision says at creation what it answers, and toolset effective shows it", async () => {
    writeFileSync(
      join(daemon.dataDir, "tools_policy.yaml"),
      "allowed_commands: [ls]\nrequire_approval: [run_command]\n",
    );
    const outside = await cli(["decisions", "add", "run_command", "git", "allow"]);
    expect(outside.code, outside.stderr).toBe(0);
    expect(outside.stderr).toBe(
      `note: an allow decision only answers require_approval (matching calls run without asking): git is not in allowed_commands of ${join(daemon.dataDir, "tools_policy.yaml")} (now: ls), so it is still refused. Add it there to allow it (the file is read again at the next call).\n`,
    );
    const inside = await cli(["decisions", "add", "run_command", "ls", "allow", "--json"]);
    expect(inside.stderr).toContain("run_command still runs only on what allowed_commands of");
    const effective = await runCli(["toolset", "effective"], { env: { ASSISTANT_DATA_DIR: daemon.dataDir } });
    expect(effective.stdout).toMatch(/DECISIONS/);
    expect(effective.stdout).toMatch(
      /^run_command +needs approval +require_approval: run_command +\S+ +allow git, allow ls$/m,
    );
    for (const d of (await api("GET", "/api/permissions/decisions")).json().items as Array<{ id: string }>) {
      await api("DELETE", `/api/permissions/decisions/${d.id}`);
    }
    rmSync(join(daemon.dataDir, "tools_policy.yaml"));
  });

  it("says plainly that the daemon is not running", async () => {
    const empty = tempDataDir();
    try {
      for (const args of [
        ["queue", "list"],
        ["queue", "approve", "x"],
      ]) {
        const res = await cli(args, empty);
        expect(res.code).toBe(1);
        expect(res.stderr).toContain("the daemon is not running");
        expect(res.stderr).toContain("assistant start");
      }
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe("daemon start", () => {
  it("refuses an invalid ASSISTANT_APPROVAL_TIMEOUT_SECS, naming it", async () => {
    const dir = tempDataDir();
    try {
      await expect(startDaemon({ ASSISTANT_APPROVAL_TIMEOUT_SECS: "soon" }, dir)).rejects.toThrow(
        /ASSISTANT_APPROVAL_TIMEOUT_SECS/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
