import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeTinyGguf } from "../../fixtures/tinyGguf.ts";
import { api as apiCall, startDaemon, type TestDaemon, tempDataDir } from "../../helpers/daemon.ts";
import { runCli } from "../../setup/helpers.ts";

// Automatic thread calibration in a real daemon: with no ASSISTANT_EMBEDDED_THREADS, the first chat loads the
// model, measures the thread counts and runs with the fastest; GET /api/router/embedded, /embedded and
// `assistant router embedded` show it, and a restarted daemon reuses it without measuring again.

let daemon: TestDaemon;
const dataDir = tempDataDir();
const modelFile = join(dataDir, "tiny.gguf");
const env = {
  ASSISTANT_EMBEDDED_MODEL_PATH: modelFile,
  ASSISTANT_EMBEDDED_CONTEXT: "2048",
  ASSISTANT_EMBEDDED_GPU: "0",
  ASSISTANT_MAX_RESPONSE_TOKENS: "8",
  ASSISTANT_MEMORY_LEARNING: "0",
};

beforeAll(async () => {
  writeTinyGguf(modelFile, { seed: 7 });
  daemon = await startDaemon(env, dataDir);
});
afterAll(async () => {
  await daemon.stop();
});

const api = (method: string, path: string, body?: unknown) => apiCall(daemon, method, path, body);
const measurements = () => daemon.output().split("embedded model calibrated").length - 1;

describe("automatic thread calibration in the daemon", () => {
  it("is not there before the first load, then the first chat measures and uses it", async () => {
    const before = (await api("GET", "/api/router/embedded")).json();
    expect(before).toMatchObject({ status: "unloaded", calibration: null, threads_source: "machine" });
    expect((await api("POST", "/api/message", { message: "/embedded", wait: true })).json().reply).toContain(
      "not calibrated yet: the first load measures",
    );

    const reply = (await api("POST", "/api/message", { message: "hello", wait: true })).json();
    expect(reply.provider).toBe("assistant_embedded");
    const state = (await api("GET", "/api/router/embedded")).json();
    expect(state).toMatchObject({ status: "loaded", threads_source: "calibration" });
    expect(state.calibration).toMatchObject({ automatic: true, threads: state.threads });
    expect(state.calibration.candidates.length).toBeGreaterThanOrEqual(1);
    expect(measurements()).toBe(1);
    const stored = JSON.parse(readFileSync(join(dataDir, "models", "embedded_calibration.json"), "utf8"));
    expect(stored.entries[0]).toMatchObject({ file: { path: modelFile }, threads: state.calibration.threads });
  });

  it("shows it in /embedded and `assistant router embedded`", async () => {
    const state = (await api("GET", "/api/router/embedded")).json();
    const slash = (await api("POST", "/api/message", { message: "/embedded", wait: true })).json().reply as string;
    expect(slash).toContain(`threads ${state.threads} (calibrated)`);
    expect(slash).toContain(`calibration at first load ${state.calibration.measured_at}`);
    expect(slash).toContain(`best ${state.calibration.threads} threads`);

    const cli = await runCli(["router", "embedded"], { env: { ASSISTANT_DATA_DIR: dataDir } });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain(`threads ${state.threads} (calibrated)`);
    const json = await runCli(["router", "embedded", "--json"], { env: { ASSISTANT_DATA_DIR: dataDir } });
    expect(json.json()).toMatchObject({ threads_source: "calibration", calibration: state.calibration });
  });

  it("a restarted daemon reuses the stored calibration without measuring", async () => {
    const stored = (await api("GET", "/api/router/embedded")).json().calibration;
    await daemon.stop();
    daemon = await startDaemon(env, dataDir);
    expect((await api("GET", "/api/router/embedded")).json()).toMatchObject({
      status: "unloaded",
      threads: stored.threads,
      threads_source: "calibration",
      calibration: stored,
    });
    expect((await api("POST", "/api/message", { message: "hello again", wait: true })).json().provider).toBe(
      "assistant_embedded",
    );
    expect((await api("GET", "/api/router/embedded")).json()).toMatchObject({ status: "loaded", calibration: stored });
    expect(measurements()).toBe(0);
  });
});
