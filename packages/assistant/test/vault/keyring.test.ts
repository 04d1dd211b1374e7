import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYRING_ENV, KEYRING_SERVICE } from "../../src/vault/keySource.ts";
import { filesAtRest, readVaultJson } from "./helpers.ts";

// The OS keyring as the vault's key source, for real: the CLI as a child process inside a private D-Bus session
// bus (dbus-run-session) with GNOME Keyring as the Secret Service, unlocked non-interactively with a throwaway
// password. Each "keyring" is a home directory: gnome-keyring keeps its login keyring (encrypted) under
// $XDG_DATA_HOME/keyrings, so a new session with the same home finds the same keyring (as after a reboot),
// and a session with a fresh home is another keyring. XDG_RUNTIME_DIR is private too, so neither the desktop's
// keyring nor its session bus is ever touched.

const bin = fileURLToPath(new URL("../../bin/assistant.mjs", import.meta.url));
const INSTALL = "apt-get install -y gnome-keyring dbus (Debian/Ubuntu; .ci/run does this)";
const UNLOCK =
  'printf %s keyring-test-pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null || exit 97; exec "$@"';

let root: string;
let missing: string | undefined;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "assistant-keyring-"));
  for (const tool of ["dbus-run-session", "gnome-keyring-daemon"]) {
    if (spawnSync(tool, ["--version"]).error) {
      missing = `the keyring tests need a real Secret Service, and ${tool} is missing: install the packages gnome-keyring and dbus: ${INSTALL}`;
      break;
    }
  }
});

/** Fails (never skips) the test when GNOME Keyring or D-Bus is not installed. */
function requireSecretService(): void {
  if (missing) throw new Error(missing);
}

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

let counter = 0;
function dir(name: string): string {
  const path = join(root, `${name}-${++counter}`);
  mkdirSync(path, { recursive: true, mode: 0o700 });
  return path;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of the test without the desktop's bus, keyring or any assistant setting. */
function baseEnv(dataDir: string, home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(ASSISTANT_|DBUS_|GNOME_KEYRING_|XDG_|DISPLAY$|WAYLAND_DISPLAY$|SSH_AUTH_SOCK$)/.test(key)) continue;
    env[key] = value;
  }
  const runtime = join(home, "run");
  mkdirSync(runtime, { recursive: true, mode: 0o700 });
  return {
    ...env,
    HOME: home,
    XDG_DATA_HOME: join(home, "data"),
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_CACHE_HOME: join(home, "cache"),
    XDG_RUNTIME_DIR: runtime,
    ASSISTANT_DATA_DIR: dataDir,
    [KEYRING_ENV]: "1",
  };
}

/** `command` in a new D-Bus session whose unlocked keyring lives in `home` (null: no session bus at all). */
function run(command: string[], dataDir: string, home: string, options: { session?: boolean; input?: string } = {}) {
  const env = baseEnv(dataDir, home);
  const [file, args] =
    options.session === false
      ? [command[0]!, command.slice(1)]
      : ["dbus-run-session", ["--", "sh", "-c", UNLOCK, "sh", ...command]];
  const result = spawnSync(file, args, { env, input: options.input ?? "", encoding: "utf8", timeout: 15_000 });
  if (result.error) throw result.error;
  if (options.session !== false) awaitKeyringExit(env.XDG_RUNTIME_DIR!);
  expect(result.status, `${command.join(" ")}: the keyring session did not start\n${result.stderr}`).not.toBe(97);
  return { code: result.status, stdout: result.stdout, stderr: result.stderr } satisfies Run;
}

/**
 * gnome-keyring-daemon outlives dbus-run-session by a moment and removes its runtime folder as it exits. Waiting
 * for that keeps the next session on the same home from reaching the old daemon, and scans from racing its cleanup.
 */
function awaitKeyringExit(runtime: string): void {
  const deadline = Date.now() + 5_000;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (existsSync(join(runtime, "keyring")) && Date.now() < deadline) Atomics.wait(pause, 0, 0, 20);
}

const cli = (args: string[], dataDir: string, home: string, options: { session?: boolean; input?: string } = {}) =>
  run([process.execPath, bin, ...args], dataDir, home, options);

/** The vault key as the keyring holds it (base64), read with the same library the vault uses. */
function keyringEntry(vaultFile: string, home: string): string {
  const script = `const { Entry } = require("@napi-rs/keyring");
process.stdout.write(String(new Entry(${JSON.stringify(KEYRING_SERVICE)}, ${JSON.stringify(resolve(vaultFile))}, { linux: { store: "secret-service" } }).getPassword()));`;
  const result = run([process.execPath, "-e", script], root, home);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

function doctorCheck(dataDir: string, home: string, session: boolean) {
  const result = cli(["doctor", "--json"], dataDir, home, { session });
  const report = JSON.parse(result.stdout) as { checks: { id: string; status: string; detail: string }[] };
  return report.checks.find((check) => check.id === "vault.key_source")!;
}

function needles(...secrets: string[]): Buffer[] {
  return secrets.flatMap((s) => [
    Buffer.from(s),
    Buffer.from(Buffer.from(s).toString("base64")),
    Buffer.from(Buffer.from(s).toString("hex")),
  ]);
}

describe("the OS keyring as the vault key (GNOME Keyring on a private D-Bus session)", () => {
  it("round trip with key_source keyring, no vault.key, the key only in the keyring; doctor is satisfied", () => {
    requireSecretService();
    const home = dir("home");
    const dataDir = join(dir("box"), "data");
    const vaultFile = join(dataDir, "vault.json");
    const secret = `KEYRING-CANARY-${Math.random().toString(36).slice(2)}`;

    const set = cli(["vault", "set", "cloud_a_api_key"], dataDir, home, { input: `${secret}\n` });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).not.toContain("warning");
    expect(readVaultJson(vaultFile).key_source).toBe("keyring");
    expect(existsSync(join(dataDir, "vault.key"))).toBe(false);

    // a later session on the same keyring (the keyring as it is after a reboot) opens it
    const get = cli(["vault", "get", "cloud_a_api_key"], dataDir, home);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toBe(`${secret}\n`);
    expect(cli(["vault", "list"], dataDir, home).stdout).toBe("cloud_a_api_key\n");

    const check = doctorCheck(dataDir, home, true);
    expect(check).toMatchObject({ status: "ok" });
    expect(check.detail).toContain("OS keyring");

    const key = keyringEntry(vaultFile, home);
    expect(Buffer.from(key, "base64")).toHaveLength(32);
    const raw = Buffer.from(key, "base64").toString("latin1");
    // the keyring's own file (under home) is encrypted; the home also holds the daemon's control socket
    const files = [...filesAtRest(dataDir), ...filesAtRest(home)];
    expect(files.some((file) => file.path.endsWith(".keyring"))).toBe(true);
    for (const { path: file, bytes } of files) {
      for (const needle of [...needles(secret, key), Buffer.from(raw, "latin1")]) {
        expect(bytes.includes(needle), `${file} holds the secret or the vault key`).toBe(false);
      }
    }
    for (const output of [set, get]) expect(output.stdout + output.stderr).not.toContain(key);
  });

  it("another keyring (a new session with an empty one) gives a clear error and changes nothing", () => {
    requireSecretService();
    const dataDir = join(dir("box"), "data");
    const vaultFile = join(dataDir, "vault.json");
    expect(cli(["vault", "set", "k"], dataDir, dir("home"), { input: "v" }).code).toBe(0);
    const before = readFileSync(vaultFile);

    const other = dir("home");
    for (const args of [
      ["vault", "get", "k"],
      ["vault", "set", "k2", "x"],
    ]) {
      const refused = cli(args, dataDir, other);
      expect(refused.code, args.join(" ")).toBe(1);
      expect(refused.stderr).toContain(`${vaultFile} was created with its key in the OS keyring`);
      expect(refused.stderr).toContain("the keyring has no such entry");
      expect(refused.stderr).toContain("nothing was changed");
    }
    expect(readFileSync(vaultFile).equals(before)).toBe(true);
    expect(existsSync(join(dataDir, "vault.key"))).toBe(false);
    expect(cli(["vault", "list"], dataDir, other).stdout).toBe("k\n"); // names need no key
    expect(doctorCheck(dataDir, other, true)).toMatchObject({ status: "fail" });
  });

  it("without a session bus the vault falls back to vault.key and says why", () => {
    requireSecretService();
    const home = dir("home");
    const dataDir = join(dir("box"), "data");
    const set = cli(["vault", "set", "k"], dataDir, home, { session: false, input: "fallback value" });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toContain("warning: the OS keyring cannot be reached");
    expect(set.stderr).toContain("DBUS_SESSION_BUS_ADDRESS");
    expect(set.stderr).toContain(join(dataDir, "vault.key"));
    const json = readVaultJson(join(dataDir, "vault.json")) as { key_source: string; keyring_fallback?: string };
    expect(json.key_source).toBe("key_file");
    expect(json.keyring_fallback).toContain("the OS keyring cannot be reached");
    expect(existsSync(join(dataDir, "vault.key"))).toBe(true);
    expect(cli(["vault", "get", "k"], dataDir, home, { session: false }).stdout).toBe("fallback value\n");

    const check = doctorCheck(dataDir, home, false);
    expect(check.status).toBe("warn");
    expect(check.detail).toContain("the OS keyring was wanted but not used");
    expect(check.detail).toContain("cannot be reached");
  });
});
