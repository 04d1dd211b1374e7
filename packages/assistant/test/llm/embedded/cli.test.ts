import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliContext } from "../../../src/cli/context.ts";
import { registerEmbeddedDownload } from "../../../src/cli/embeddedDownload.ts";
import { dataPaths } from "../../../src/config/paths.ts";
import { AppError } from "../../../src/util/errors.ts";
import { type ModelServer, startModelServer } from "./modelServer.ts";

// `config models embedded-download`, registered on an in-process commander `config models` command (the real
// `config models` group belongs to another module) with a CliContext writing to buffers.

const root = mkdtempSync(join(tmpdir(), "assistant-embedded-cli-"));
const body = randomBytes(2 * 1024 * 1024 + 7);
const sha256 = createHash("sha256").update(body).digest("hex");
let server: ModelServer;
beforeAll(async () => {
  server = await startModelServer(body);
});
afterAll(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

interface Run {
  stdout: string;
  stderr: string;
  dataDir: string;
}

function buffer(tty: boolean): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  // cli-progress draws only on a terminal; these are what it asks a terminal for.
  if (tty) Object.assign(stream, { isTTY: true, columns: 100, cursorTo: () => true, clearLine: () => true });
  return { stream, text: () => chunks.join("") };
}

async function run(args: string[], env: NodeJS.ProcessEnv = {}, options: { tty?: boolean; dataDir?: string } = {}) {
  const dataDir = options.dataDir ?? mkdtempSync(join(root, "data-"));
  const stdout = buffer(false);
  const stderr = buffer(options.tty === true);
  const ctx: CliContext = {
    env: {
      ASSISTANT_EMBEDDED_MODEL_URL: `${server.url}/qwen.gguf`,
      ASSISTANT_EMBEDDED_MODEL_SHA256: sha256,
      ASSISTANT_EMBEDDED_MODEL_SIZE: String(body.length),
      ...env,
    },
    paths: dataPaths(dataDir),
    stdin: Readable.from([]),
    stdout: stdout.stream,
    stderr: stderr.stream,
  };
  const program = new Command().exitOverride();
  registerEmbeddedDownload(program.command("config").command("models"), ctx);
  const result: Run = { stdout: "", stderr: "", dataDir };
  try {
    await program.parseAsync(["config", "models", "embedded-download", ...args], { from: "user" });
  } finally {
    result.stdout = stdout.text();
    result.stderr = stderr.text();
  }
  return result;
}

describe("config models embedded-download", () => {
  it("downloads into the data directory's models folder and prints the final progress with --json", async () => {
    const result = await run(["--json"]);
    const path = join(result.dataDir, "models", "qwen3_0_6b.gguf");
    expect(JSON.parse(result.stdout)).toMatchObject({
      status: "completed",
      model_id: "qwen3_0_6b",
      path,
      bytes_done: body.length,
      bytes_total: body.length,
      percent: 100,
      error: null,
      already_present: false,
    });
    expect(readFileSync(path).equals(body)).toBe(true);
    // Not a terminal: one progress line per 10%, on stderr so stdout stays JSON.
    const lines = result.stderr.trim().split("\n");
    expect(lines.filter((l) => l.startsWith("downloading qwen3_0_6b: ")).map((l) => l.split(" ")[2])).toEqual([
      "0%",
      "10%",
      "20%",
      "30%",
      "40%",
      "50%",
      "60%",
      "70%",
      "80%",
      "90%",
      "100%",
    ]);
    expect(lines.at(-1)).toBe("verifying qwen3_0_6b (2.0 MiB)");

    const again = await run([], {}, { dataDir: result.dataDir });
    expect(again.stdout).toBe(`qwen3_0_6b is already downloaded and verified: ${path} (2.0 MiB, sha256 ${sha256})\n`);
  });

  it("draws a progress bar on a terminal and ends with the path, size and verified sha256", async () => {
    const result = await run(["--model", "llama3_2_1b"], {}, { tty: true });
    const path = join(result.dataDir, "models", "llama3_2_1b.gguf");
    expect(result.stdout).toBe(`downloaded llama3_2_1b to ${path} (2.0 MiB); sha256 verified (${sha256})\n`);
    expect(result.stderr).toContain("100%");
    expect(result.stderr).toContain("2.0 MiB of 2.0 MiB");
    expect(existsSync(path)).toBe(true);
  });

  it("fails with a clear error on a sha256 mismatch and keeps nothing", async () => {
    const error = await run([], { ASSISTANT_EMBEDDED_MODEL_SHA256: "f".repeat(64) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).message).toMatch(/sha256 mismatch: expected f{64}/);
  });

  it("refuses an unknown model id, listing the catalogue, and a custom model file", async () => {
    await expect(run(["--model", "gpt_9"])).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining("known ids: qwen3_0_6b, qwen2_5_0_5b, smollm2_360m, llama3_2_1b"),
    });
    await expect(run([], { ASSISTANT_EMBEDDED_MODEL_PATH: "/models/mine.gguf" })).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining("nothing to download"),
    });
  });
});
