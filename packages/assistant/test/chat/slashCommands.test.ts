import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { handleApproval, isAlways, isYes } from "../../src/cli/chat.ts";
import type { CliContext } from "../../src/cli/context.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { agentDataDir, startScriptedDaemon } from "../agent/helpers.ts";
import { cleanUp, health, sandbox, waitFor } from "../daemon/helpers.ts";
import { api as apiCall, type TestDaemon, tempDataDir } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";
import { runCli } from "../setup/helpers.ts";

// The slash commands of the chat on a real daemon (POST /api/message answers them without the model), `/restart`
// under the real supervisor, and the inline approvals of `assistant chat`.

let server: ScriptedServer;
let daemon: TestDaemon;
let dataDir: string;
let work: string;

beforeAll(async () => {
  server = await startOpenAiServer();
  work = tempDataDir("assistant-slash-work-");
  dataDir = agentDataDir(server.url, work);
  daemon = await startScriptedDaemon(dataDir);
});
afterAll(async () => {
  await daemon?.stop();
  await server?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  if (work) rmSync(work, { recursive: true, force: true });
});

const api = (method: string, path: string, body?: unknown) => apiCall(daemon, method, path, body);

async function slash(message: string, sessionId?: string): Promise<string> {
  const res = await api("POST", "/api/message", {
    message,
    wait: true,
    ...(sessionId ? { session_id: sessionId } : {}),
  });
  expect(res.status, res.body).toBe(200);
  expect(res.json().command).toBe(true);
  return res.json().reply;
}

async function waitForStatus(id: string, wanted: string[]): Promise<string> {
  return await waitFor(`task ${id} to be ${wanted.join(" or ")}`, async () => {
    const status = (await api("GET", `/api/tasks/${id}`)).json().status as string;
    return wanted.includes(status) ? status : undefined;
  });
}

describe("slash commands", () => {
  it("/help lists every registered command and /exit, in lines that fit 80 columns", async () => {
    const help = await slash("/help");
    for (const line of help.split("\n")) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(help).toContain("/exit (or Ctrl-D) leaves the chat");
    for (const usage of [
      "/help",
      "/status",
      "/newsession",
      "/embedded [reload|calibrate]",
      "/metrics",
      "/routes",
      "/models",
      '/task create "<message>"',
      "/cancel <TASK_ID>, /stop <TASK_ID>",
      "/doctor",
      "/advice",
      "/config list | get <KEY> | set <KEY> <value>",
      "/vault list",
      "/restart",
    ]) {
      expect(help).toContain(usage);
    }
  });

  it("/task create runs the message in a new session without blocking the chat; /cancel stops it", async () => {
    server.enqueue({ kind: "hang" });
    const created = await slash('/task create "think about the weather for a long time"');
    const id = /Task ([0-9a-f-]{36}) created/.exec(created)?.[1];
    expect(id, created).toBeDefined();
    expect(created).toContain(`assistant task watch ${id}`);
    const record = (await api("GET", `/api/tasks/${id}`)).json();
    expect(record).toMatchObject({ origin: "slash", message: "think about the weather for a long time" });
    await waitForStatus(id!, ["running"]);

    // The chat goes on while the task hangs on the model.
    server.enqueue({ kind: "reply", text: "Still here." });
    const reply = await api("POST", "/api/message", { message: "are you there?", wait: true });
    expect(reply.json().reply).toBe("Still here.");
    expect(reply.json().session_id).not.toBe(record.session_id);

    const cancelled = await slash(`/cancel ${id}`);
    expect(cancelled).toMatch(new RegExp(`Task ${id} (cancelled|is being cancelled)`));
    expect(await waitForStatus(id!, ["cancelled", "failed", "completed"])).toBe("cancelled");
    expect((await api("GET", `/api/tasks/${id}`)).json().reason).toBe("cancelled from the chat");
    expect(await slash(`/stop ${id}`)).toContain(`task ${id} is already cancelled`);
    expect(await slash("/task create")).toContain('usage: /task create "<message>"');
  });

  it("/stop and /cancel on an unknown id answer with the error", async () => {
    expect(await slash("/stop no-such-task")).toContain("no task with id no-such-task");
    expect(await slash("/cancel no-such-task")).toContain("no task with id no-such-task");
    expect(await slash("/cancel")).toContain("usage: /cancel <TASK_ID>");
  });

  it("/doctor prints the checks; /advice adds the to-do list", async () => {
    const doctor = await slash("/doctor");
    expect(doctor).toMatch(/\d+ ok, \d+ warnings?, \d+ failed/);
    expect(doctor).toMatch(/^ok {2}/m);
    expect(doctor).not.toContain("Advice:");
    const advice = await slash("/advice");
    expect(advice).toMatch(/\d+ ok, \d+ warnings?, \d+ failed/);
    expect(advice).toContain("Advice:\n  - ");
  });

  it("/config set then get round-trips through assistant.env; secret-looking values are masked", async () => {
    const set = await slash("/config set MY_GREETING hello world");
    expect(set).toContain(`Set MY_GREETING in ${join(dataDir, "assistant.env")}`);
    expect(set).toContain("A restart may be needed");
    expect(readFileSync(join(dataDir, "assistant.env"), "utf8")).toMatch(/^MY_GREETING=.*hello world/m);
    expect(await slash("/config get MY_GREETING")).toBe("MY_GREETING=hello world");
    expect(await slash("/config get NOT_SET_HERE")).toContain("NOT_SET_HERE is not set");

    appendFileSync(
      join(dataDir, "assistant.env"),
      "\nSEARCH_API_KEY=leaked-value-1\nGITHUB_TOKEN=leaked-value-2\nPLAIN_KEY=leaked-value-3\n",
    );
    const list = await slash("/config list");
    expect(list).toContain("MY_GREETING=hello world");
    expect(list).toContain("SEARCH_API_KEY=********");
    expect(list).toContain("GITHUB_TOKEN=********");
    expect(list).toContain("PLAIN_KEY=********");
    expect(list).not.toContain("leaked-value");
    expect(await slash("/config get PLAIN_KEY")).toBe("PLAIN_KEY=********");
    const refused = await slash("/config set OTHER_API_KEY abc");
    expect(refused).toContain("looks like a secret");
    expect(readFileSync(join(dataDir, "assistant.env"), "utf8")).not.toContain("OTHER_API_KEY");
    expect(await slash("/config")).toContain("usage: /config list");
  });

  it("/vault list shows secret names only", async () => {
    const put = await api("PUT", "/api/vault", { key: "my_service_token", value: "vault-canary-93f1c" });
    expect(put.status, put.body).toBe(200);
    const list = await slash("/vault list");
    expect(list).toContain("my_service_token");
    expect(list).not.toContain("vault-canary-93f1c");
  });

  it("/restart without the supervisor explains and keeps the daemon up", async () => {
    const reply = await slash("/restart");
    expect(reply).toContain("only works when the daemon runs under the supervisor (`assistant start`)");
    expect((await api("GET", "/api/health")).status).toBe(200);
  });
});

describe("/restart under `assistant start`", () => {
  afterEach(cleanUp);

  it("restarts the daemon at once, without backoff", async () => {
    const box = await sandbox();
    expect((await box.cli(["start"])).code).toBe(0);
    const first = box.daemonInfo()!;
    const token = readFileSync(join(box.dataDir, "auth_token"), "utf8").trim();
    const reply = await apiCall({ url: `http://127.0.0.1:${first.port}`, token }, "POST", "/api/message", {
      message: "/restart",
      wait: true,
    });
    expect(reply.json().reply).toContain("Restarting...");
    const second = await waitFor("a new daemon", () => {
      const info = box.daemonInfo();
      return info && info.pid !== first.pid ? info.pid : undefined;
    });
    await waitFor("health", () => health(box.port));
    expect(box.daemonInfo()!.supervisor_pid).toBe(first.supervisor_pid);
    expect(second).not.toBe(first.pid);
    expect(box.log()).toContain("the daemon asked to be restarted; starting it again");
    expect(box.log()).not.toContain("restarting it in");
    const state = await waitFor("the supervisor to see it up", () => {
      const current = box.supervisorState();
      return current?.state === "running" ? current : undefined;
    });
    expect(state.restarts).toBe(1);
  });
});

describe("assistant chat: inline approvals", () => {
  it("asks in an interactive session and writes the file when the answer is y", async () => {
    const target = join(work, "approved.txt");
    server.enqueue(
      { kind: "tool_call", name: "write_file", arguments: { path: target, content: "written after approval" } },
      { kind: "reply", text: "I wrote the file." },
    );
    const chat = await runCli(["chat", "--task-type", "conversation"], {
      env: { ASSISTANT_DATA_DIR: dataDir },
      input: "please save a note\ny\n",
    });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain("tool_call write_file");
    expect(chat.stdout).toMatch(/approval needed: write_file \(rule: require_approval: write_file, queue item \S+\)/);
    expect(chat.stdout).toContain(`  arguments: {"path":"${target}","content":"written after approval"}`);
    expect(chat.stdout).not.toContain("replaces the existing file");
    expect(chat.stdout).toContain(`Approve write_file? (always: write_file on ${target} from now on) [y/N/always] `);
    expect(chat.stdout).toContain("approved write_file\n");
    expect(chat.stdout).toMatch(/tool_result write_file ok/);
    expect(chat.stdout).toContain("I wrote the file.");
    expect(readFileSync(target, "utf8")).toBe("written after approval");
  });

  it("denies when the answer is not y", async () => {
    const target = join(work, "denied.txt");
    server.enqueue(
      { kind: "tool_call", name: "write_file", arguments: { path: target, content: "must not be written" } },
      { kind: "reply", text: "It was denied." },
    );
    const chat = await runCli(["chat", "--task-type", "conversation"], {
      env: { ASSISTANT_DATA_DIR: dataDir },
      input: "please save another note\nno\n",
    });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain("denied write_file");
    expect(chat.stdout).toMatch(/tool_result write_file denied/);
    expect(existsSync(target)).toBe(false);
  });

  it("says when a write replaces a file; always approves and lets the same write run without asking", async () => {
    const target = join(work, "replaced.txt");
    writeFileSync(target, "the old text");
    server.enqueue(
      { kind: "tool_call", name: "write_file", arguments: { path: target, content: "the new text" } },
      { kind: "reply", text: "Replaced." },
    );
    const chat = await runCli(["chat", "--task-type", "conversation"], {
      env: { ASSISTANT_DATA_DIR: dataDir },
      input: "replace the note\nalways\n",
    });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain(`  note: this replaces the existing file ${target} (12 bytes)`);
    expect(chat.stdout).toContain(`approved write_file; from now on write_file on ${target} runs without asking`);
    expect(readFileSync(target, "utf8")).toBe("the new text");
    const decisions = (await api("GET", "/api/permissions/decisions")).json().items as Array<Record<string, string>>;
    const made = decisions.find((d) => d.scope === target);
    expect(made).toMatchObject({ tool: "write_file", effect: "allow" });

    server.enqueue(
      { kind: "tool_call", name: "write_file", arguments: { path: target, content: "again" } },
      { kind: "reply", text: "Again." },
    );
    const again = await runCli(["chat", "--task-type", "conversation", "once", "more"], {
      env: { ASSISTANT_DATA_DIR: dataDir },
    });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toContain("approval needed");
    expect(readFileSync(target, "utf8")).toBe("again");
    expect((await api("DELETE", `/api/permissions/decisions/${made!.id}`)).status).toBe(200);
  });

  it("a one-shot question prints how to approve, and goes on once approved elsewhere", async () => {
    const target = join(work, "oneshot.txt");
    server.enqueue(
      { kind: "tool_call", name: "write_file", arguments: { path: target, content: "one shot" } },
      { kind: "reply", text: "Done." },
    );
    const running = runCli(["chat", "--task-type", "conversation", "save", "it"], {
      env: { ASSISTANT_DATA_DIR: dataDir },
    });
    const item = await waitFor("a pending queue item", async () => {
      const items = (await api("GET", "/api/permissions/queue?status=pending")).json().items as Array<{
        id: string;
        tool: string;
      }>;
      return items.find((i) => i.tool === "write_file");
    });
    expect((await api("POST", `/api/permissions/queue/${item.id}/approve`)).status).toBe(200);
    const chat = await running;
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain(`approve it with \`assistant permissions queue approve ${item.id}\``);
    expect(chat.stdout).not.toContain("[y/N");
    expect(chat.stdout).toContain(`\`assistant permissions queue approve ${item.id}\` [--always]`);
    expect(chat.stdout).toContain("Done.");
    expect(readFileSync(target, "utf8")).toBe("one shot");
  });
});

describe("handleApproval", () => {
  function fakeCtx(): CliContext & { out: () => string } {
    let out = "";
    const sink = {
      write: (chunk: string) => {
        out += chunk;
        return true;
      },
    };
    return {
      env: {},
      paths: dataPaths(tempDataDir()),
      stdin: process.stdin,
      stdout: sink as never,
      stderr: sink as never,
      out: () => out,
    };
  }
  const data = { queue_item_id: "q-1", tool: "write_file", rule: "require_approval: write_file" };

  it("approves on y (always: with a decision), denies otherwise, and only prints the commands without a prompt", async () => {
    const calls: string[] = [];
    const client = {
      getQueueItem: async () => ({ arguments_summary: '{"path":"/w/a.txt"}', scope: "/w/a.txt", notice: null }),
      approveQueueItem: async (id: string, body: { always?: boolean }) => {
        calls.push(`approve ${id}${body.always ? " always" : ""}`);
      },
      denyQueueItem: async (id: string) => {
        calls.push(`deny ${id}`);
      },
    };
    const ctx = fakeCtx();
    const questions: string[] = [];
    const ask = async (question: string) => {
      questions.push(question);
      return "Y";
    };
    expect(await handleApproval(ctx, client as never, data, ask)).toBe("approved");
    expect(questions).toEqual(["Approve write_file? (always: write_file on /w/a.txt from now on) [y/N/always] "]);
    expect(await handleApproval(ctx, client as never, data, async () => "")).toBe("denied");
    expect(await handleApproval(ctx, client as never, data, async () => undefined)).toBe("denied");
    expect(await handleApproval(ctx, client as never, data, async () => " Always")).toBe("approved");
    expect(calls).toEqual(["approve q-1", "deny q-1", "deny q-1", "approve q-1 always"]);
    expect(await handleApproval(ctx, client as never, data, undefined)).toBe("shown");
    expect(calls).toHaveLength(4);
    expect(ctx.out()).toContain("assistant permissions queue approve q-1");
    expect(["y", "yes", " Yes "].every(isYes)).toBe(true);
    expect(["", "n", "yeah", "no"].some(isYes)).toBe(false);
    expect(["a", "always", " ALWAYS "].every(isAlways)).toBe(true);
    expect(["", "y", "al", "always!"].some(isAlways)).toBe(false);
  });
});
