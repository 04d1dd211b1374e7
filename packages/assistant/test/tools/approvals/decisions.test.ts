import { describe, expect, it } from "vitest";
import { PersistentDecisions } from "../../../src/tools/approvals/decisions.ts";
import { ApprovalMode } from "../../../src/tools/approvals/mode.ts";
import { appError } from "../../config/helpers.ts";
import { testStore } from "./helpers.ts";

describe("PersistentDecisions", () => {
  it("creates, lists (oldest first, paginated) and deletes rules; they survive a reopen", () => {
    let store = testStore();
    const decisions = new PersistentDecisions(store.db);
    const git = decisions.create({ tool: "run_command", scope: "git", effect: "allow" });
    expect(git).toMatchObject({ tool: "run_command", scope: "git", effect: "allow" });
    expect(git.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(git.created_at).toBe(git.updated_at);
    const etc = decisions.create({ tool: "write_file", scope: "/etc", effect: "deny" });
    const all = decisions.create({ tool: "*", scope: "*", effect: "deny" });

    const first = decisions.list({ limit: 2 });
    expect(first.items.map((d) => d.id)).toEqual([git.id, etc.id]);
    expect(decisions.list({ limit: 2, cursor: first.next_cursor! })).toEqual({ items: [all], next_cursor: null });

    store = store.reopen();
    const again = new PersistentDecisions(store.db);
    expect(again.all()).toEqual([git, etc, all]);
    expect(again.delete(etc.id)).toEqual(etc);
    expect(again.all().map((d) => d.id)).toEqual([git.id, all.id]);
    expect(appError(() => again.delete(etc.id))).toMatchObject({ code: "not_found", status: 404 });
  });

  it("refuses a second rule for the same tool and scope with a 409 naming the first", () => {
    const store = testStore();
    const decisions = new PersistentDecisions(store.db);
    const first = decisions.create({ tool: "web_fetch", scope: "example.com", effect: "allow" });
    const error = appError(() => decisions.create({ tool: "web_fetch", scope: "example.com", effect: "deny" }));
    expect(error).toMatchObject({ code: "conflict", status: 409, details: { id: first.id } });
    expect(decisions.all()).toEqual([first]);
    // Same scope, other tool: a different rule.
    expect(decisions.create({ tool: "web_search", scope: "example.com", effect: "deny" }).tool).toBe("web_search");
  });

  it.each([
    [{ tool: "Run_Command", scope: "git", effect: "allow" }, "tool"],
    [{ tool: "", scope: "git", effect: "allow" }, "tool"],
    [{ tool: "a".repeat(65), scope: "git", effect: "allow" }, "tool"],
    [{ tool: "run command", scope: "git", effect: "allow" }, "tool"],
    [{ tool: "run_command", scope: "", effect: "allow" }, "scope"],
    [{ tool: "run_command", scope: "x".repeat(1025), effect: "allow" }, "scope"],
    [{ tool: "run_command", scope: "git\0rm", effect: "allow" }, "scope"],
    [{ tool: "run_command", scope: "git", effect: "ask" }, "effect"],
  ])("refuses %j with a 400 naming %s", (input, field) => {
    const store = testStore();
    const decisions = new PersistentDecisions(store.db);
    expect(appError(() => decisions.create(input))).toMatchObject({
      code: "invalid_request",
      status: 400,
      details: { field },
    });
    expect(decisions.all()).toEqual([]);
  });

  it("accepts the limits: a 64-character tool name and a 1024-character scope", () => {
    const decisions = new PersistentDecisions(testStore().db);
    const rule = decisions.create({ tool: "a".repeat(64), scope: "/".repeat(1024), effect: "deny" });
    expect(rule.scope).toHaveLength(1024);
  });
});

describe("ApprovalMode", () => {
  it("defaults to ask_me, stores a change across a reopen, refuses unknown modes", () => {
    let store = testStore();
    expect(new ApprovalMode(store.db).get()).toBe("ask_me");
    expect(new ApprovalMode(store.db).set("allow_all")).toBe("allow_all");
    store = store.reopen();
    const mode = new ApprovalMode(store.db);
    expect(mode.get()).toBe("allow_all");
    expect(appError(() => mode.set("yolo"))).toMatchObject({ code: "invalid_request", details: { field: "mode" } });
    expect(mode.get()).toBe("allow_all");
    mode.set("ask_me");
    expect(mode.get()).toBe("ask_me");
  });

  it("reads an unreadable stored value as ask_me (never as allow_all)", () => {
    const store = testStore();
    store.db
      .prepare("INSERT INTO settings (key, value, updated_at) VALUES ('permissions.mode', ?, 'now')")
      .run('"everything"');
    expect(new ApprovalMode(store.db).get()).toBe("ask_me");
    store.db.prepare("UPDATE settings SET value = 'not json' WHERE key = 'permissions.mode'").run();
    expect(new ApprovalMode(store.db).get()).toBe("ask_me");
  });
});
