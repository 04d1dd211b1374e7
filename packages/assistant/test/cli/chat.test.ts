import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentDataDir, startScriptedDaemon } from "../agent/helpers.ts";
import { api as apiCall, cliBin, type TestDaemon, tempDataDir, until } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";
import { runCli } from "../setup/helpers.ts";

// `assistant chat` as a person sees it: tool results by their first line, and how a one-shot question ends when
// the person stops it: its reader closes the pipe (`| head -c 5`), or Ctrl-C while a tool call waits for
// approval. A real daemon against the scripted model server; real pipes and signals.

let server: ScriptedServer;
let daemon: TestDaemon;
let dataDir: string;
let work: string;

beforeAll(async () => {
  server = await startOpenAiServer();
  work = tempDataDir("assistant-chat-ending-work-");
  mkdirSync(join(work, "files"));
  dataDir = agentDataDir(server.url, work);
  daemon = await startScriptedDaemon(dataDir);
});
afterAll(async () => {
  await daemon?.stop();
  await server?.close();
  for (const dir of [dataDir, work]) if (dir) rmSync(dir, { recursive: true, force: true });
});

const api = (method: string, path: string, body?: unknown) => apiCall(daemon, method, path, body);

describe("tool results in the chat", () => {
  it("show the first line of what the tool read, not the untrusted-data fence around it", async () => {
    const note = join(work, "files", "note.txt");
    writeFileSync(note, "Buy milk and eggs\nCall the plumber\n");
    server.enqueue(
      { kind: "tool_call", name: "read_file", arguments: { path: note } },
      { kind: "reply", text: "You need milk and eggs." },
    );
    const chat = await runCli(["chat", "--task-type", "conversation", "what is on my note?"], {
      env: { ASSISTANT_DATA_DIR: dataDir },
    });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain("tool_result read_file ok: Buy milk and eggs");
    expect(chat.stdout).not.toContain("untrusted_data");
  });
});

describe("assistant chat into a pipe that closes", () => {
  it("`assistant chat ... | head -c 5` prints 5 bytes and ends quietly with exit 0", async () => {
    // A long answer, streamed slowly enough that head has exited while the CLI still writes.
    const words = Array.from({ length: 400 }, (_, i) => `word${i} `);
    server.enqueue({ kind: "reply", text: words, chunkDelayMs: 2 });
    // bash runs the pipeline; $PIPESTATUS (its first element) is the CLI's own exit status. (Not spawnSync: the
    // scripted model server runs in this process.)
    const script =
      '"$0" "$1" chat --task-type conversation "tell me a long story" 2>"$2" | head -c 5; echo " cli=$PIPESTATUS"';
    const errFile = join(work, "chat.err");
    const child = spawn("bash", ["-c", script, process.execPath, cliBin, errFile], {
      env: { ...process.env, ASSISTANT_DATA_DIR: dataDir },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.on("data", (d) => (stdout += d));
    await new Promise((resolve) => child.on("close", resolve));
    expect(stdout).toBe("word0 cli=0\n");
    expect(readFileSync(errFile, "utf8")).toBe(""); // no EPIPE stack trace
  });
});

describe("Ctrl-C on a one-shot chat waiting for approval", () => {
  it("cancels the task and expires its queue item; approving it later says it expired", async () => {
    const target = join(work, "files", "never.txt");
    server.enqueue({ kind: "tool_call", name: "write_file", arguments: { path: target, content: "never" } });
    const child = spawn(process.execPath, [cliBin, "chat", "--task-type", "conversation", "save a note"], {
      env: { ...process.env, ASSISTANT_DATA_DIR: dataDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on("exit", (code, signal) => resolve({ code, signal })),
    );
    const itemId = await until(
      async () => /queue item (\S+)\)/.exec(stdout)?.[1],
      (id) => id !== undefined,
      15_000,
    );
    child.kill("SIGINT");
    const exit = await ended;
    expect(exit.signal ?? exit.code).toBe(exit.signal ? "SIGINT" : 130); // the shell sees 130 either way
    expect(stderr).toMatch(/stopped: task \S+ is cancelled/);
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
    const taskId = /stopped: task (\S+) is cancelled/.exec(stderr)![1]!;

    const task = await until(
      async () => (await api("GET", `/api/tasks/${taskId}`)).json(),
      (t) => t.status === "cancelled",
    );
    expect(task.status).toBe("cancelled");
    const item = (await api("GET", `/api/permissions/queue/${itemId}`)).json();
    expect(item).toMatchObject({ status: "expired", note: "its task ended before anyone approved it" });

    const approve = await runCli(["permissions", "queue", "approve", itemId!], {
      env: { ASSISTANT_DATA_DIR: dataDir },
    });
    expect(approve.code).toBe(1);
    expect(approve.stderr).toContain("already expired (its task ended before anyone approved it)");
    expect(existsSync(target)).toBe(false);
  });
});
