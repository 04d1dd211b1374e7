import { writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createTcpServer } from "node:net";
import { AssistantClient } from "@assistant/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { raw, startDaemon, type TestDaemon } from "../helpers/daemon.ts";
import { type Check, checkById, freePort, type Sandbox, sandbox } from "./helpers.ts";

// Doctor and a real daemon: the advice comes from the running daemon, and the port check tells our daemon
// apart from a foreign program on the port.

describe("assistant doctor --advice with a running daemon", () => {
  let box: Sandbox;
  let daemon: TestDaemon;

  beforeAll(async () => {
    box = sandbox();
    expect((await box.run(["init", "--defaults"])).code).toBe(0);
    daemon = await startDaemon({}, box.dataDir);
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it("prints the daemon's checks and advice", async () => {
    const res = await box.run(["doctor", "--advice"]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(
      new RegExp(
        `^ok {4}daemon port +this daemon \\(pid ${daemon.process.pid}\\) is listening on 127\\.0\\.0\\.1:${daemon.port}$`,
        "m",
      ),
    );
    expect(res.stdout).toMatch(/^Advice:\n {2}- /m);
  });

  it("--json gives the same report as GET /api/doctor through the typed client", async () => {
    const res = await box.run(["doctor", "--advice", "--json"]);
    expect(res.code, res.stderr).toBe(0);
    const cli = res.json<{ checks: Check[]; advice: string[] }>();
    const api = await new AssistantClient({ baseUrl: daemon.url, token: daemon.token }).getDoctorReport();
    expect(api.checks.map((c) => [c.id, c.status])).toEqual(cli.checks.map((c) => [c.id, c.status]));
    expect(checkById(api.checks, "port").status).toBe("ok");
    expect(checkById(api.checks, "store")).toMatchObject({
      status: "ok",
      detail: expect.stringMatching(/^integrity ok/),
    });
    expect(checkById(api.checks, "config.llm_router").status).toBe("ok");
    expect(api.advice.length).toBeGreaterThan(0);
    expect(api.advice.every((line) => typeof line === "string" && line.length > 10)).toBe(true);
  });

  it("needs the API token", async () => {
    expect((await raw(`${daemon.url}/api/doctor`)).status).toBe(401);
  });

  it("plain doctor recognises the daemon of this data directory on its port", async () => {
    const res = await box.run(["doctor", "--json"]);
    const port = checkById(res.json().checks, "port");
    expect(port).toMatchObject({ status: "ok" });
    expect(port.detail).toBe(`the daemon (pid ${daemon.process.pid}, version 0.10.0) answers on port ${daemon.port}`);
  });

  it("says the daemon is not running once it stopped, and exits 1", async () => {
    expect(await daemon.stop()).toBe(0);
    const res = await box.run(["doctor", "--advice"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: the daemon is not running/m);
    expect(res.stdout).toBe("");
  });
});

describe("assistant doctor --advice without a daemon", () => {
  it("exits 1 on a data directory that never had one", async () => {
    const res = await sandbox().run(["doctor", "--advice"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      "the daemon is not running, so it cannot give advice; start it with `assistant start`",
    );
  });

  it("ignores a stale daemon.json whose process is gone", async () => {
    const box = sandbox();
    await box.run(["init", "--defaults"]);
    const port = await freePort();
    writeFileSync(
      box.file("daemon.json"),
      JSON.stringify({ pid: 2 ** 22 + 12345, port, bind: "127.0.0.1", version: "0.10.0" }),
    );
    const res = await box.run(["doctor", "--json"], { env: { ASSISTANT_PORT: String(port) } });
    expect(checkById(res.json().checks, "port")).toMatchObject({
      status: "ok",
      detail: `port ${port} on 127.0.0.1 is free`,
    });
    expect((await box.run(["doctor", "--advice"])).code).toBe(1);
  });
});

describe("assistant doctor with a foreign program on the port", () => {
  const servers: Array<{ close(cb: () => void): void }> = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  });

  function listen<S extends Server | ReturnType<typeof createTcpServer>>(server: S): Promise<number> {
    servers.push(server);
    return new Promise((resolve) => {
      server.listen(0, "127.0.0.1", () => {
        const address = server.address();
        resolve(typeof address === "object" && address ? address.port : 0);
      });
    });
  }

  it("fails the port check when a plain TCP server holds the port", async () => {
    const port = await listen(createTcpServer((socket) => socket.destroy()));
    const box = sandbox();
    const res = await box.run(["doctor", "--json"], { env: { ASSISTANT_PORT: String(port) } });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: 1 check\(s\) failed: port/m);
    const check = checkById(res.json().checks, "port");
    expect(check).toMatchObject({
      status: "fail",
      fixable: false,
      detail: `port ${port} on 127.0.0.1 is used by another program, not the assistant daemon`,
    });
    expect(check.fix).toContain("assistant config env set ASSISTANT_PORT <port>");
  });

  it("is not fooled by an HTTP server that answers /api/health with something else", async () => {
    const port = await listen(
      createHttpServer((_req, res) => {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ status: "healthy" }));
      }),
    );
    const box = sandbox();
    const res = await box.run(["doctor"], { env: { ASSISTANT_PORT: String(port) } });
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(
      new RegExp(`^FAIL {2}daemon port +port ${port} on 127\\.0\\.0\\.1 is used by another program`, "m"),
    );
  });
});
