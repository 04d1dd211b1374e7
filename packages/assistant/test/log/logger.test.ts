import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.ts";
import { registerSecret } from "../../src/util/redact.ts";
import { tempDataDir } from "../helpers/daemon.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function logFile(): string {
  const dir = tempDataDir("assistant-log-");
  dirs.push(dir);
  return join(dir, "logs", "daemon.log");
}

describe("logger", () => {
  it("writes records at or above its level, one line each, with mode 0600", () => {
    const file = logFile();
    const log = createLogger({ level: "warn", file });
    log.info("hidden info");
    log.warn("shown warning", { port: 3876 });
    log.error("shown error");
    const lines = readFileSync(file, "utf8").trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z WARN {2}shown warning \{"port":3876\}$/);
    expect(lines[1]).toMatch(/ERROR shown error$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(log.enabled("debug")).toBe(false);
  });

  it("redacts registered secrets and bearer tokens from messages and fields", () => {
    const file = logFile();
    registerSecret("sk-log-canary-1234567890");
    const log = createLogger({ level: "trace", file });
    log.info("calling with sk-log-canary-1234567890", { header: "Bearer abcdefghijklmnopqrstuvwxyz012345" });
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain("sk-log-canary-1234567890");
    expect(text).not.toContain("abcdefghijklmnopqrstuvwxyz012345");
    expect(text).toContain("[REDACTED]");
  });

  it("rotates by size and keeps a bounded number of old files", () => {
    const file = logFile();
    const log = createLogger({ level: "info", file, maxBytes: 1000, keep: 2 });
    for (let i = 0; i < 100; i++) log.info(`record ${i} ${"x".repeat(50)}`);
    expect(statSync(file).size).toBeLessThanOrEqual(1000);
    expect(existsSync(`${file}.1`)).toBe(true);
    expect(existsSync(`${file}.2`)).toBe(true);
    expect(existsSync(`${file}.3`)).toBe(false);
    expect(readFileSync(file, "utf8")).toContain("record 99 ");
  });
});
