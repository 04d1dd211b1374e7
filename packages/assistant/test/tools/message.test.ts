import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { toolHarness } from "./harness.ts";

// message POSTs to the user's webhook (ASSISTANT_MESSAGE_WEBHOOK_URL), here a local server that keeps what it got.
// Webhook URLs often carry a token in their path, so the URL must never show up in output.

interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const received: Received[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      received.push({ method: req.method ?? "", path, headers: req.headers, body: Buffer.concat(chunks).toString() });
      if (path.startsWith("/hook/ok")) res.writeHead(204).end();
      else if (path.startsWith("/hook/moved")) res.writeHead(307, { location: "/hook/ok-elsewhere" }).end();
      else res.writeHead(500).end("nope");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received.length = 0;
});

const POLICY = { web_search_enabled: false };

const harness = (webhook: string | null, policy: typeof POLICY | null = POLICY) =>
  toolHarness({ policy, env: webhook === null ? {} : { ASSISTANT_MESSAGE_WEBHOOK_URL: webhook } });

describe("message", () => {
  it("posts the text with its task and session as JSON", async () => {
    const before = Date.now();
    const result = await harness(`${base}/hook/ok-T0KEN`).invoke(
      "message",
      { text: "Backup finished ✓" },
      { taskId: "task-1", sessionId: "sess-1" },
    );
    expect(result.status).toBe("ok");
    expect(result.output).toBe("Message sent.");
    expect(received).toHaveLength(1);
    const got = received[0]!;
    expect(got.method).toBe("POST");
    expect(got.path).toBe("/hook/ok-T0KEN");
    expect(got.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(got.body);
    expect(body).toEqual({
      text: "Backup finished ✓",
      source: "assistant",
      task_id: "task-1",
      session_id: "sess-1",
      sent_at: expect.any(String),
    });
    expect(Date.parse(body.sent_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(new Date(body.sent_at).toISOString()).toBe(body.sent_at);
  });

  it("sends null task and session ids outside a task", async () => {
    await harness(`${base}/hook/ok`).invoke("message", { text: "hi" });
    expect(JSON.parse(received[0]!.body)).toMatchObject({ task_id: null, session_id: null });
  });

  it("says how to configure a webhook when there is none", async () => {
    const result = await harness(null).invoke("message", { text: "hi" });
    expect(result.status).toBe("error");
    expect(result.output).toBe(
      "message failed: no outbound message webhook: set ASSISTANT_MESSAGE_WEBHOOK_URL in assistant.env",
    );
  });

  it("refuses a webhook that is not http(s) when the settings are read (daemon start), without showing it", () => {
    // The whole message: the URL (here with a token in it) is never quoted.
    expect(() => harness("file:///tmp/inbox-T0KEN")).toThrow(
      /^environment: ASSISTANT_MESSAGE_WEBHOOK_URL: must be an http or https URL: not file:$/,
    );
    expect(() => harness("not a url T0KEN")).toThrow(
      /^environment: ASSISTANT_MESSAGE_WEBHOOK_URL: must be an http or https URL: this is not a URL$/,
    );
  });

  it("fails with the status on a non-2xx answer or a redirect, without showing the URL", async () => {
    const failed = await harness(`${base}/hook/fail-T0KEN`).invoke("message", { text: "hi" });
    expect(failed.status).toBe("error");
    expect(failed.output).toMatch(/HTTP 500/);
    expect(failed.output).not.toContain("T0KEN");
    const moved = await harness(`${base}/hook/moved-T0KEN`).invoke("message", { text: "hi" });
    expect(moved.status).toBe("error");
    expect(moved.output).toMatch(/HTTP 307; redirects are not followed/);
    expect(received.map((r) => r.path)).toEqual(["/hook/fail-T0KEN", "/hook/moved-T0KEN"]);
  });

  it("reports an unreachable webhook without its URL", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await harness(`http://127.0.0.1:${port}/hook/ok-T0KEN`).invoke("message", { text: "hi" });
    expect(result.status).toBe("error");
    expect(result.output).toBe("message failed: could not reach the message webhook (ECONNREFUSED)");
  });

  it("asks the policy first and validates the text", async () => {
    const denied = await harness(`${base}/hook/ok`, null).invoke("message", { text: "hi" });
    expect(denied.status).toBe("denied");
    expect(received).toHaveLength(0);
    const h = harness(`${base}/hook/ok`);
    expect((await h.invoke("message", { text: "" })).status).toBe("invalid_arguments");
    expect((await h.invoke("message", { text: "x".repeat(4001) })).status).toBe("invalid_arguments");
    expect((await h.invoke("message", { text: "x".repeat(4000) })).status).toBe("ok");
  });
});
