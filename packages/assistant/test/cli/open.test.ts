import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { raw, startDaemon, type TestDaemon, tempDataDir } from "../helpers/daemon.ts";
import { runCli } from "../setup/helpers.ts";

// `assistant open` through the real CLI against a real daemon. The browser is a fake `xdg-open` on PATH that
// records its arguments and environment, so the test sees exactly what a browser would be handed.

let daemon: TestDaemon;
let work: string;
let openerDir: string;
let emptyDir: string;
const argsLog = () => join(work, "opener-args.txt");
const envLog = () => join(work, "opener-env.txt");

beforeAll(async () => {
  daemon = await startDaemon();
  work = tempDataDir("assistant-open-");
  openerDir = join(work, "bin");
  emptyDir = join(work, "empty");
  mkdirSync(openerDir);
  mkdirSync(emptyDir);
  writeFileSync(
    join(openerDir, "xdg-open"),
    `#!/bin/sh\nprintf '%s\\n' "$@" >> "$OPENER_ARGS"\nenv >> "$OPENER_ENV"\nexit "\${OPENER_EXIT:-0}"\n`,
  );
  chmodSync(join(openerDir, "xdg-open"), 0o755);
});
afterAll(async () => {
  await daemon?.stop();
  for (const dir of [daemon?.dataDir, work]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A desktop session on Linux: a display, not over SSH, and PATH holding only `path`. */
function open(args: string[], env: NodeJS.ProcessEnv = {}, path = openerDir) {
  rmSync(argsLog(), { force: true });
  rmSync(envLog(), { force: true });
  return runCli(["open", ...args], {
    env: {
      ASSISTANT_DATA_DIR: daemon.dataDir,
      PATH: path,
      DISPLAY: ":0",
      WAYLAND_DISPLAY: "",
      SSH_CONNECTION: "",
      SSH_CLIENT: "",
      SSH_TTY: "",
      OPENER_ARGS: argsLog(),
      OPENER_ENV: envLog(),
      ...env,
    },
  });
}

const recorded = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : "");
const loginUrl = (port: number) => new RegExp(`^http://127\\.0\\.0\\.1:${port}/login\\?code=[A-Za-z0-9_-]{32}$`);

/** Follows the login link like a browser: the session cookie it sets, or null. */
async function logIn(url: string): Promise<string | null> {
  const res = await raw(url);
  if (res.status !== 303) return null;
  return String(res.headers["set-cookie"]).split(";")[0] ?? null;
}

describe("assistant open", () => {
  it("hands the browser a one-time login link that logs in once, and never the token", async () => {
    const run = await open([]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`opened ${daemon.url} in your browser (logged in by a one-time link)\n`);
    const args = recorded(argsLog()).trim().split("\n");
    expect(args).toHaveLength(1);
    const url = args[0]!;
    expect(url).toMatch(loginUrl(daemon.port));

    const cookie = await logIn(url);
    expect(cookie).toMatch(/^assistant_session=[A-Za-z0-9_-]{40,}$/);
    expect((await raw(`${daemon.url}/api/status`, { headers: { cookie: cookie! } })).status).toBe(200);
    expect(await logIn(url)).toBeNull(); // used once

    for (const text of [run.stdout, run.stderr, recorded(argsLog()), recorded(envLog())]) {
      expect(text).not.toContain(daemon.token);
    }
  });

  it("prints the link and says why when no opener is on PATH", async () => {
    const run = await open([], {}, emptyDir);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      "no browser opened: no browser opener found (`xdg-open` is not on PATH). Open this link yourself within 120 s (it works once):\n",
    );
    const url = run.stdout.trim();
    expect(url).toMatch(loginUrl(daemon.port));
    expect(await logIn(url)).not.toBeNull();
    expect(run.stdout + run.stderr).not.toContain(daemon.token);
  });

  it("prints the link when the opener fails", async () => {
    const run = await open([], { OPENER_EXIT: "3" });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("no browser opened: `xdg-open` failed (exit 3)");
    expect(await logIn(run.stdout.trim())).not.toBeNull();
  });

  it("does not try a browser over SSH without a display", async () => {
    const run = await open([], { DISPLAY: "", SSH_CONNECTION: "10.0.0.2 50000 10.0.0.1 22" });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      "no browser opened: this is an SSH session without a display (DISPLAY and WAYLAND_DISPLAY are unset)",
    );
    expect(recorded(argsLog())).toBe("");
    expect(await logIn(run.stdout.trim())).not.toBeNull();
  });

  it("--print only prints the link; --json gives url, expires_in, opened", async () => {
    const printed = await open(["--print"]);
    expect(printed.code).toBe(0);
    expect(printed.stderr).toBe("");
    expect(printed.stdout.trim()).toMatch(loginUrl(daemon.port));
    expect(recorded(argsLog())).toBe("");

    const json = await open(["--json"]);
    expect(json.code).toBe(0);
    const body = json.json();
    expect(body).toEqual({
      url: expect.stringMatching(loginUrl(daemon.port)),
      expires_in: 120,
      opened: true,
      reason: null,
    });
    expect(recorded(argsLog()).trim()).toBe(body.url);

    const offline = await open(["--json"], {}, emptyDir);
    expect(offline.json()).toMatchObject({
      opened: false,
      reason: "no browser opener found (`xdg-open` is not on PATH)",
    });
  });

  it("says how to start the daemon when none runs", async () => {
    const run = await runCli(["open"], { env: { ASSISTANT_DATA_DIR: emptyDir } });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      "error: the daemon is not running, so no login link can be made; start it with `assistant start` (or `assistant up`)\n",
    );
  });
});
