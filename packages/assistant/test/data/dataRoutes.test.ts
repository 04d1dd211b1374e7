import { existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { unzipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentDataDir } from "../agent/helpers.ts";
import { api as apiCall, raw, startDaemon, type TestDaemon, tempDataDir, until } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";

// The data directory's routes through a real daemon (docs/http-api.md#data): the overview, the zip export opened
// and read (a session's messages are in it, the token and the vault never), and deleting the history with and
// without its confirmation word, while a task runs, and what it keeps.

let server: ScriptedServer;
let daemon: TestDaemon;
const SECRET = "sk-vault-value-that-must-never-leave";

// biome-ignore lint/suspicious/noExplicitAny: tests read response bodies loosely
async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await apiCall(daemon, method, path, body);
  return { status: response.status, body: response.body ? response.json() : undefined };
}

/** The export as the client gets it: the raw bytes of the zip. */
async function exportZip(): Promise<{ status: number; type: string | null; files: Record<string, string> }> {
  const response = await fetch(`${daemon.url}/api/data/export`, {
    headers: { authorization: `Bearer ${daemon.token}` },
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const files = Object.fromEntries(
    Object.entries(unzipSync(bytes)).map(([name, content]) => [name, new TextDecoder().decode(content)]),
  );
  return { status: response.status, type: response.headers.get("content-type"), files };
}

beforeAll(async () => {
  server = await startOpenAiServer();
  const dataDir = agentDataDir(server.url, tempDataDir("assistant-data-work-"));
  daemon = await startDaemon({}, dataDir);
}, 30_000);

afterAll(async () => {
  await daemon?.stop();
  await server?.close();
});

describe("the data directory over HTTP", () => {
  it("lists the files with their sizes and the database counts, never a file's content", async () => {
    expect((await api("PUT", "/api/vault", { key: "cloud_a_api_key", value: SECRET })).status).toBe(200);
    server.enqueue({ kind: "reply", text: "Green tea it is." });
    // A task of the API (a plain chat turn writes no report file).
    const task = await api("POST", "/api/tasks", { message: "Remember: I drink green tea at 4pm", wait: true });
    expect(task.body.status).toBe("completed");
    const overview = await api("GET", "/api/data");
    expect(overview.status).toBe(200);
    expect(overview.body.data_dir).toBe(daemon.dataDir);
    const byPath = new Map(overview.body.files.map((f: { path: string }) => [f.path, f]));
    expect(byPath.get("assistant.db")).toMatchObject({ kind: "file", bytes: expect.any(Number) });
    expect(byPath.get("auth_token")).toMatchObject({
      kind: "file",
      bytes: statSync(join(daemon.dataDir, "auth_token")).size,
    });
    expect(byPath.get("reports/")).toMatchObject({ kind: "directory", partial: false });
    expect(overview.body.counts).toMatchObject({ sessions: 1, messages: 2, tasks: 1, schedules: 0, memories: 0 });
    expect(overview.body.counts.events).toBeGreaterThan(3);
    const text = JSON.stringify(overview.body);
    expect(text).not.toContain(daemon.token);
    expect(text).not.toContain(SECRET);
  });

  it("exports a zip holding the session's messages, tasks and reports, never the token, the vault or its key", async () => {
    // A link planted in reports/ to the vault's key is not followed.
    symlinkSync(join(daemon.dataDir, "vault.key"), join(daemon.dataDir, "reports", "planted.json"));
    const zip = await exportZip();
    expect(zip.status).toBe(200);
    expect(zip.type).toBe("application/zip");
    const names = Object.keys(zip.files);
    expect(names).toEqual(
      expect.arrayContaining([
        "manifest.json",
        "sessions.json",
        "messages.jsonl",
        "tasks.json",
        "memory.json",
        "schedules.json",
      ]),
    );
    const messages = zip.files["messages.jsonl"]!.trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(messages.map((m) => m.content)).toEqual(["Remember: I drink green tea at 4pm", "Green tea it is."]);
    const tasks = JSON.parse(zip.files["tasks.json"]!);
    expect(tasks).toHaveLength(1);
    expect(names).toContain(`reports/${tasks[0].id}.json`);
    expect(names).not.toContain("reports/planted.json");
    expect(JSON.parse(zip.files["schedules.json"]!)).toEqual([]);
    expect(JSON.parse(zip.files["manifest.json"]!).counts.messages).toBe(2);
    const everything = Object.values(zip.files).join("\n");
    expect(everything).not.toContain(daemon.token);
    expect(everything).not.toContain(SECRET);
    const vaultKey = readFileSync(join(daemon.dataDir, "vault.key"));
    expect(everything).not.toContain(vaultKey.toString("hex"));
    expect(everything).not.toContain(vaultKey.toString("base64"));
    expect(names.some((n) => /vault|auth_token/.test(n))).toBe(false);
  });

  it("refuses the export and the deletion without the token", async () => {
    expect((await apiCall(daemon, "GET", "/api/data/export", undefined, null)).status).toBe(401);
    expect((await apiCall(daemon, "GET", "/api/data", undefined, null)).status).toBe(401);
    const refused = await apiCall(daemon, "POST", "/api/data/delete-history", { confirm: "delete" }, null);
    expect(refused.status).toBe(401);
    expect((await api("GET", "/api/data")).body.counts.messages).toBe(2);
  });

  it("deletes nothing without the exact confirmation word, or while a task runs", async () => {
    for (const body of [{}, { confirm: "yes" }, { confirm: "DELETE" }, { confirm: " delete" }, { confirm: 1 }]) {
      const answer = await api("POST", "/api/data/delete-history", body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.code).toBe("invalid_request");
      expect(JSON.stringify(answer.body.error)).toContain("confirm");
    }
    const extra = await api("POST", "/api/data/delete-history", { confirm: "delete", path: "../vault.json" });
    expect(extra.status).toBe(400);
    server.enqueue({ kind: "hang" });
    const started = await api("POST", "/api/message", { message: "Think slowly" });
    expect(started.status).toBe(202);
    await until(
      () => api("GET", `/api/tasks/${started.body.task_id}`),
      (r) => r.body.status === "running",
    );
    const busy = await api("POST", "/api/data/delete-history", { confirm: "delete" });
    expect(busy.status).toBe(409);
    expect(busy.body.error.message).toContain("1 task is still queued, running or waiting for approval");
    expect((await api("POST", `/api/tasks/${started.body.task_id}/cancel`)).status).toBe(200);
    await until(
      () => api("GET", `/api/tasks/${started.body.task_id}`),
      (r) => r.body.status === "cancelled",
    );
    const counts = (await api("GET", "/api/data")).body.counts;
    expect(counts.tasks).toBe(2);
    expect(counts.messages).toBeGreaterThanOrEqual(3);
  });

  it("deletes the history with the word, keeping memory, schedules (their session emptied), config and the vault", async () => {
    expect((await api("POST", "/api/memory/second-brain/items", { content: "The user drinks green tea" })).status).toBe(
      201,
    );
    const schedule = await api("POST", "/api/schedules", {
      name: "tea",
      description: "Remind me about tea",
      interval_secs: 86_400,
    });
    expect(schedule.status).toBe(201);
    const before = (await api("GET", "/api/tasks")).body.items.map((t: { id: string }) => t.id);
    expect(existsSync(join(daemon.dataDir, "reports", `${before.at(-1)}.json`))).toBe(true);
    writeFileSync(join(daemon.dataDir, "reports", "mission-cycle-1.md"), "# cycle 1\n");

    const deleted = await api("POST", "/api/data/delete-history", { confirm: "delete" });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ tasks: 2, kept_sessions: 1 });
    expect(deleted.body.sessions).toBe(2);
    expect(deleted.body.messages).toBeGreaterThanOrEqual(3);
    expect(deleted.body.reports).toBeGreaterThanOrEqual(2);
    const counts = (await api("GET", "/api/data")).body.counts;
    expect(counts).toMatchObject({ sessions: 1, messages: 0, tasks: 0, memories: 1, schedules: 1 });
    for (const id of before) expect(existsSync(join(daemon.dataDir, "reports", `${id}.json`))).toBe(false);
    expect(existsSync(join(daemon.dataDir, "reports", "mission-cycle-1.md"))).toBe(true);
    expect((await api("GET", `/api/tasks/${before[0]}`)).status).toBe(404);
    expect((await api("GET", "/api/vault")).body.items).toEqual([{ key: "cloud_a_api_key" }]);
    expect(existsSync(join(daemon.dataDir, "llm_router.yaml"))).toBe(true);

    // The daemon goes on: a new conversation and the kept schedule's session both work.
    server.enqueue({ kind: "reply", text: "Fresh start." });
    const after = await api("POST", "/api/message", { message: "Hello again", wait: true });
    expect(after.body.reply).toBe("Fresh start.");
    const zip = await exportZip();
    expect(zip.files["messages.jsonl"]!.trim().split("\n")).toHaveLength(2);
    expect(JSON.parse(zip.files["memory.json"]!)[0].content).toBe("The user drinks green tea");
    expect(JSON.parse(zip.files["schedules.json"]!)[0].name).toBe("tea");
  });

  it("answers an empty export as a valid zip with empty lists", async () => {
    const empty = await startDaemon({}, tempDataDir());
    try {
      const response = await fetch(`${empty.url}/api/data/export`, {
        headers: { authorization: `Bearer ${empty.token}` },
      });
      expect(response.headers.get("content-disposition")).toMatch(
        /^attachment; filename="assistant-export-\d{4}-\d\d-\d\d\.zip"$/,
      );
      const files = unzipSync(new Uint8Array(await response.arrayBuffer()));
      expect(JSON.parse(new TextDecoder().decode(files["sessions.json"]!))).toEqual([]);
      expect(new TextDecoder().decode(files["messages.jsonl"]!)).toBe("");
      const plain = await raw(`${empty.url}/api/data/export`, { headers: { authorization: `Bearer ${empty.token}` } });
      expect(plain.status).toBe(200);
    } finally {
      await empty.stop();
    }
  }, 30_000);
});
