import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { AssistantClient } from "@assistant/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawResponse, raw, startDaemon, type TestDaemon } from "../helpers/daemon.ts";
import { filesAtRest } from "../helpers/files.ts";
import { errorShapeProblem } from "./fuzz/contract.ts";
import { sendFuzzRequest } from "./fuzz/send.ts";

let daemon: TestDaemon;
let auth: Record<string, string>;

beforeAll(async () => {
  daemon = await startDaemon({ ASSISTANT_MAX_BODY_BYTES: "4096", ASSISTANT_LOG: "trace" });
  auth = { authorization: `Bearer ${daemon.token}` };
});
afterAll(async () => {
  expect(await daemon.stop()).toBe(0);
});

function expectError(res: RawResponse, status: number, code: string) {
  expect(res.status).toBe(status);
  const body = res.json();
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(5);
  expect(JSON.stringify(body)).not.toMatch(/\n\s+at /); // no stack trace leaves the daemon
}

describe("health and status", () => {
  it("answers health without authentication", async () => {
    const res = await raw(`${daemon.url}/api/health`);
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ status: "ok", version: "0.10.0" });
  });

  it("reports status with the data dir and bound port to an authenticated client", async () => {
    const client = new AssistantClient({ baseUrl: daemon.url, token: daemon.token });
    const status = await client.getStatus();
    expect(status.data_dir).toBe(daemon.dataDir);
    expect(status.listen).toEqual({ bind: "127.0.0.1", port: daemon.port });
    expect(status.uptime_secs).toBeGreaterThanOrEqual(0);
  });

  it("writes daemon.json with pid, port, bind and version", () => {
    const info = JSON.parse(readFileSync(join(daemon.dataDir, "daemon.json"), "utf8"));
    expect(info).toMatchObject({ pid: daemon.process.pid, port: daemon.port, bind: "127.0.0.1", version: "0.10.0" });
    expect(statSync(join(daemon.dataDir, "auth_token")).mode & 0o777).toBe(0o600);
  });
});

describe("authentication", () => {
  it("refuses a missing token", async () => {
    expectError(await raw(`${daemon.url}/api/status`), 401, "unauthorized");
  });

  it("refuses a wrong token, including one that is a prefix of the real one", async () => {
    for (const token of ["nope", daemon.token.slice(0, 32), `${daemon.token}x`]) {
      expectError(
        await raw(`${daemon.url}/api/status`, { headers: { authorization: `Bearer ${token}` } }),
        401,
        "unauthorized",
      );
    }
  });

  it("does not reveal unknown routes to anonymous callers", async () => {
    expectError(await raw(`${daemon.url}/api/does-not-exist`), 401, "unauthorized");
    expectError(await raw(`${daemon.url}/api/does-not-exist`, { headers: auth }), 404, "not_found");
  });

  it("exchanges a one-time login code for a session cookie, once", async () => {
    const res = await raw(`${daemon.url}/api/auth/login-code`, { method: "POST", headers: auth });
    expect(res.status).toBe(201);
    const { code, url, expires_in } = res.json();
    expect(expires_in).toBe(120);
    expect(url).toBe(`${daemon.url}/login?code=${code}`);
    expect(res.body).not.toContain(daemon.token);

    const login = await raw(url);
    expect(login.status).toBe(303);
    expect(login.headers.location).toBe("/chat");
    const cookie = String(login.headers["set-cookie"]);
    expect(cookie).toMatch(/^assistant_session=[A-Za-z0-9_-]{40,}; HttpOnly; SameSite=Strict; Path=\//);
    const session = cookie.split(";")[0]!;

    const status = await raw(`${daemon.url}/api/status`, { headers: { cookie: session } });
    expect(status.status).toBe(200);

    const again = await raw(url);
    expect(again.status).toBe(401);
    expect(again.headers["set-cookie"]).toBeUndefined();
  });

  it("sets nothing for a wrong code and rejects a forged cookie", async () => {
    const wrong = await raw(`${daemon.url}/login?code=forged`);
    expect(wrong.status).toBe(401);
    expect(wrong.headers["set-cookie"]).toBeUndefined();
    expectError(
      await raw(`${daemon.url}/api/status`, { headers: { cookie: "assistant_session=forged" } }),
      401,
      "unauthorized",
    );
  });
});

describe("browser guard", () => {
  it("refuses a foreign Host (DNS rebinding)", async () => {
    expectError(await raw(`${daemon.url}/api/health`, { headers: { host: "evil.example:3876" } }), 403, "forbidden");
    expectError(
      await raw(`${daemon.url}/api/status`, { headers: { ...auth, host: "attacker.test" } }),
      403,
      "forbidden",
    );
  });

  it("accepts localhost names", async () => {
    for (const host of [`localhost:${daemon.port}`, `127.0.0.1:${daemon.port}`, `[::1]:${daemon.port}`]) {
      expect((await raw(`${daemon.url}/api/health`, { headers: { host } })).status).toBe(200);
    }
  });

  it("refuses cross-site Origins and accepts its own and the Studio's", async () => {
    for (const origin of ["https://evil.example", "null", `http://127.0.0.1:${daemon.port + 1}`, "file://"]) {
      expectError(await raw(`${daemon.url}/api/status`, { headers: { ...auth, origin } }), 403, "forbidden");
    }
    for (const origin of [
      `http://127.0.0.1:${daemon.port}`,
      `http://localhost:${daemon.port}`,
      "http://localhost:5178",
    ]) {
      expect((await raw(`${daemon.url}/api/status`, { headers: { ...auth, origin } })).status).toBe(200);
    }
  });
});

describe("request validation", () => {
  const put = (body: string, headers: Record<string, string> = { "content-type": "application/json" }) =>
    raw(`${daemon.url}/api/vault`, { method: "PUT", headers: { ...auth, ...headers }, body });

  it("answers malformed JSON with invalid_request", async () => {
    expectError(await put("{not json"), 400, "invalid_request");
    expectError(await put(""), 400, "invalid_request");
  });

  it("names the failing field", async () => {
    const res = await put(JSON.stringify({ key: 42, value: "x" }));
    expectError(res, 400, "invalid_request");
    expect(res.json().error.details.field).toBe("body.key");
    expectError(await put(JSON.stringify({ key: "a", value: "b", extra: true })), 400, "invalid_request");
  });

  it("refuses bodies over ASSISTANT_MAX_BODY_BYTES", async () => {
    expectError(await put(JSON.stringify({ key: "big", value: "x".repeat(10_000) })), 413, "payload_too_large");
  });

  it("refuses non-JSON media types", async () => {
    expectError(
      await put("key=a", { "content-type": "application/x-www-form-urlencoded" }),
      415,
      "unsupported_media_type",
    );
    expectError(await put("hello", { "content-type": "text/plain" }), 415, "unsupported_media_type");
  });

  it("validates pagination", async () => {
    expectError(await raw(`${daemon.url}/api/vault?limit=501`, { headers: auth }), 400, "invalid_request");
    expectError(await raw(`${daemon.url}/api/vault?limit=0`, { headers: auth }), 400, "invalid_request");
    expectError(await raw(`${daemon.url}/api/vault?cursor=garbage!!`, { headers: auth }), 400, "invalid_request");
  });
});

describe("vault over HTTP", () => {
  const canary = "canary-Zx81-secret-value-7f3a";

  it("stores, lists names only, pages and deletes secrets", async () => {
    const client = new AssistantClient({ baseUrl: daemon.url, token: daemon.token });
    await client.setVaultSecret({ key: "http_canary", value: canary });
    for (const key of ["k1", "k2", "k3"]) await client.setVaultSecret({ key, value: `value-of-${key}` });
    const first = await client.listVaultKeys({ limit: 2 });
    expect(first.items).toEqual([{ key: "http_canary" }, { key: "k1" }]);
    expect(first.next_cursor).not.toBeNull();
    const second = await client.listVaultKeys({ limit: 2, cursor: first.next_cursor! });
    expect(second.items).toEqual([{ key: "k2" }, { key: "k3" }]);
    expect(second.next_cursor).toBeNull();
    expect(JSON.stringify([first, second])).not.toContain("value-of");

    await client.deleteVaultSecret({ key: "k3" });
    const res = await raw(`${daemon.url}/api/vault`, {
      method: "DELETE",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ key: "k3" }),
    });
    expectError(res, 404, "not_found");
  });

  it("never writes a secret value in plaintext under the data dir (logs at trace level included)", () => {
    const files = filesAtRest(daemon.dataDir);
    expect(files.some((f) => f.path.endsWith("daemon.log"))).toBe(true);
    for (const { path, bytes } of files) expect(bytes.includes(canary), path).toBe(false);
  });
});

describe("events", () => {
  it("streams stored events and resumes after Last-Event-ID", async () => {
    const client = new AssistantClient({ baseUrl: daemon.url, token: daemon.token });
    const controller = new AbortController();
    const seen: Array<{ id: string; kind: string; data: Record<string, unknown> }> = [];
    const reader = (async () => {
      try {
        for await (const event of client.events({ kinds: ["vault_updated"], signal: controller.signal })) {
          seen.push(event);
          if (seen.some((e) => e.data.key === "live_key")) break;
        }
      } catch (error) {
        if ((error as Error).name !== "AbortError") throw error;
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    await client.setVaultSecret({ key: "live_key", value: "v" });
    await Promise.race([reader, new Promise((r) => setTimeout(r, 5000))]);
    controller.abort();
    const live = seen.find((e) => e.data.key === "live_key");
    expect(live).toMatchObject({ kind: "vault_updated", data: { key: "live_key", action: "set" } });
    expect(JSON.stringify(seen)).not.toContain('"value"');

    // Everything before `live` is replayed to a client that says it saw up to the first event.
    const firstId = seen[0]!.id;
    const replay: string[] = [];
    const controller2 = new AbortController();
    for await (const event of client.events({
      lastEventId: firstId,
      kinds: ["vault_updated"],
      signal: controller2.signal,
    })) {
      replay.push(event.id);
      if (event.id === live!.id) break;
    }
    controller2.abort();
    expect(replay[0]).not.toBe(firstId);
    expect(Number(replay[0])).toBeGreaterThan(Number(firstId));
    expect(replay.at(-1)).toBe(live!.id);
  });

  it("refuses unknown event kinds", async () => {
    expectError(await raw(`${daemon.url}/api/events?kinds=bogus`, { headers: auth }), 400, "invalid_request");
  });
});

describe("openapi", () => {
  it("describes every route with its schemas", async () => {
    const res = await raw(`${daemon.url}/api/openapi.json`, { headers: auth });
    expect(res.status).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe("3.1.0");
    for (const path of ["/api/health", "/api/status", "/api/events", "/api/vault", "/api/auth/login-code"]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(doc.paths["/api/vault"].put.requestBody.content["application/json"].schema.properties.key).toBeDefined();
    expect(doc.paths["/api/health"].get.security).toEqual([]);
  });
});

describe("hostile input", () => {
  const deep = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;

  it("refuses JSON nested more than 64 levels with 400 before any route code runs", async () => {
    const vault = (value: string) =>
      raw(`${daemon.url}/api/vault`, {
        method: "PUT",
        headers: { ...auth, "content-type": "application/json" },
        body: `{"key":"a","value":${value}}`,
      });
    const tooDeep = await vault(deep(64)); // 65 with the body object itself
    expectError(tooDeep, 400, "invalid_request");
    expect(tooDeep.json().error.message).toContain("nested more than 64 levels");
    const atLimit = await vault(deep(63)); // reaches validation, which names the field
    expect(atLimit.json().error.details.field).toBe("body.value");
    const mission = await raw(`${daemon.url}/api/autonomous-mission`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/json" },
      body: `{"objective":${deep(1000)}}`,
    });
    expectError(mission, 400, "invalid_request");
    const yaml = (body: string) =>
      raw(`${daemon.url}/api/autonomous-mission`, {
        method: "PUT",
        headers: { ...auth, "content-type": "application/yaml" },
        body,
      });
    const deepYaml = await yaml(`objective: ${deep(100)}\n`);
    expectError(deepYaml, 400, "invalid_request");
    expect(deepYaml.json().error.message).toContain("nested more than 64 levels");
    expectError(await yaml(`objective: ${deep(1500)}\n`), 400, "invalid_request"); // past yaml's own parser
  });

  it("answers bodies far over the limit with 413, on every method, without resetting the connection", async () => {
    const body = `{"a":"${"x".repeat(8 * 1024 * 1024)}"}`;
    for (const [method, path] of [
      ["POST", "/api/auth/login-code"],
      ["PUT", "/api/vault"],
      ["POST", "/api/router/embedded/reload"],
      ["GET", "/api/status"],
    ] as const) {
      for (const chunked of method === "GET" ? [false] : [false, true]) {
        const headers = { ...auth, "content-type": "application/json" };
        const outcome = await sendFuzzRequest(
          daemon.url,
          { kind: "over_limit", operation: "", method, path, headers, body, chunked },
          20_000,
        );
        expect(outcome.error, `${method} ${path} chunked=${chunked}`).toBeUndefined();
        expect(outcome.answer?.status).toBe(413);
        expect(errorShapeProblem(outcome.answer?.body ?? "")).toBeUndefined();
      }
    }
  });

  it("answers the framework's own errors in the error shape", async () => {
    expectError(await raw(`${daemon.url}/api/tasks/%ff`, { headers: auth }), 400, "invalid_request");
    expectError(await raw(`${daemon.url}/api/%zz`), 400, "invalid_request");
    expectError(await raw(`${daemon.url}/api/tasks/${"x".repeat(200)}`, { headers: auth }), 400, "invalid_request");
    expectError(await raw(`${daemon.url}/api/vault`, { method: "PATCH", headers: auth }), 404, "not_found");
    const head = await raw(`${daemon.url}/api/events`, { method: "HEAD", headers: auth });
    expect(head.status).toBe(200);
    expect(head.headers["content-type"]).toContain("text/event-stream");
  });
});

describe("malformed HTTP", () => {
  it("answers broken request framing with the JSON error shape", async () => {
    const { connect } = await import("node:net");
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(daemon.port, "127.0.0.1", () =>
        socket.write("GARBAGE / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
      );
      let data = "";
      socket.on("data", (d) => (data += d));
      socket.on("end", () => resolve(data));
      socket.on("error", reject);
    });
    expect(answer).toMatch(/^HTTP\/1.1 400/);
    expect(answer).toContain('"code":"invalid_request"');
  });
});
