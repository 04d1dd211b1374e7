import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { tinyGgufBytes, writeTinyGguf } from "../fixtures/tinyGguf.ts";

const run = promisify(execFile);
const child = join(import.meta.dirname, "tinyGgufChild.ts");
const dir = mkdtempSync(join(tmpdir(), "assistant-tiny-gguf-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface ChildReport {
  llamaMs: number;
  loadMs: number;
  helloWorldTokens: number;
  chatWrapper: string;
  answer: string;
  generated: number;
  tokensPerSecond: number;
  json: string;
}

describe("tiny GGUF fixture", () => {
  it("is a GGUF v3 file, deterministic for a seed, a few hundred KB, written fast", () => {
    const path = join(dir, "fixture.gguf");
    const started = performance.now();
    writeTinyGguf(path, { seed: 42 });
    expect(performance.now() - started).toBeLessThan(1000);
    const bytes = readFileSync(path);
    expect(bytes.subarray(0, 4).toString("ascii")).toBe("GGUF");
    expect(bytes.readUInt32LE(4)).toBe(3);
    expect(bytes.length % 32).toBe(0);
    expect(bytes.length).toBeGreaterThan(100_000);
    expect(bytes.length).toBeLessThan(1_000_000);
    expect(tinyGgufBytes({ seed: 42 }).equals(bytes)).toBe(true);
    expect(tinyGgufBytes({ seed: 43 }).equals(bytes)).toBe(false);
  });

  it("loads in llama.cpp through node-llama-cpp and generates, free and under a JSON schema", async () => {
    const path = join(dir, "model.gguf");
    writeTinyGguf(path, { seed: 7 });
    const { stdout } = await run(process.execPath, [child, path], { timeout: 20_000, encoding: "utf8" });
    const report = JSON.parse(stdout.trim().split("\n").at(-1)!) as ChildReport;

    expect(report.helloWorldTokens).toBeGreaterThan(0);
    expect(report.chatWrapper).toBe("ChatML");
    expect(typeof report.answer).toBe("string");
    expect(report.generated).toBeGreaterThan(0);

    const value = JSON.parse(report.json) as unknown;
    expect(value).toEqual({ name: expect.any(String), ok: expect.any(Boolean) });
    // The grammar counts code points; node-llama-cpp's grammar.parse() counts UTF-16 units and can reject an
    // astral character the grammar let through, so check the length here by code points.
    expect([...(value as { name: string }).name].length).toBeLessThanOrEqual(8);
  });
});
