// bench/embedded: decode speed of the embedded model as a person sees it (streamed chat through the daemon, POST
// /api/message with stream: true) vs bare node-llama-cpp in this process at its best thread count, side by side,
// interleaved in one run, for a tiny model (where the daemon's per-token cost shows most) and a larger one.
// Bare's best thread count is measured here first (every count the daemon's calibration tries, median of a few
// generations each); the daemon gets no ASSISTANT_EMBEDDED_THREADS, so its own calibration at first load picks
// its count (shown in the table). Target (issue 16): daemon tokens/s at least 0.95x bare. Time to first token is
// printed too (bare TTFT / daemon TTFT): the daemon adds a fixed few ms per request (HTTP, session rows, routing).
// The models are synthetic llama GGUFs with random weights written by the tests' generator
// (packages/assistant/test/fixtures/tinyGguf.ts): `--shapes` lists them as embedding x blocks x feed-forward
// (default: the tests' tiny 64x2x128, ~1 MB, and 512x8x1408, ~105 MB of F32); --model takes a real GGUF instead.
// Memory learning is off in the daemon so no background call competes with the bare runs for the CPU.
// Run: npm run bench:embedded [-- --runs 10 --tokens 256 --shapes 64x2x128,512x8x1408 --threads N --verbose]
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { ChatHistoryItem, LlamaChat, LlamaContextSequence } from "node-llama-cpp";
import { systemPrompt } from "../../packages/assistant/src/agent/prompt.ts";
import { agentProfileSchema } from "../../packages/assistant/src/config/schemas/agentProfile.ts";
import { threadCandidates } from "../../packages/assistant/src/llm/embedded/calibration.ts";
import { writeTinyGguf } from "../../packages/assistant/test/fixtures/tinyGguf.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    /** Force this thread count on both sides instead of bare's best and the daemon's calibration. */
    threads: { type: "string" },
    tokens: { type: "string", default: "256" },
    context: { type: "string", default: "2048" },
    /** Synthetic models: embedding length x blocks x feed-forward length, comma-separated. */
    shapes: { type: "string", default: "64x2x128,512x8x1408" },
    /** A real GGUF file instead of the synthetic models. */
    model: { type: "string" },
    /** Print every run's numbers too. */
    verbose: { type: "boolean", default: false },
  },
});
const runs = Number(values.runs);
const warmup = Number(values.warmup);
const forcedThreads = values.threads ? Number(values.threads) : undefined;
const maxTokens = Number(values.tokens);
const contextSize = Number(values.context);
const root = resolve(import.meta.dirname, "..", "..");
const daemonEntry = join(root, "packages", "assistant", "bin", "assistant-daemon.mjs");
// The embedded adapter's sampling when the route sets none (src/llm/embedded/languageModel.ts).
const TEMPERATURE = 0.7;
// A random-weight model sometimes samples an end token early; a rate over a handful of tokens is noise.
const MIN_TOKENS = 16;

const workDir = mkdtempSync(join(tmpdir(), "assistant-bench-embedded-"));
let daemon: ChildProcess | undefined;
process.on("exit", () => {
  daemon?.kill("SIGTERM");
  rmSync(workDir, { recursive: true, force: true });
});

interface Model {
  path: string;
  label: string;
}
const models: Model[] = values.model
  ? [{ path: resolve(values.model), label: values.model }]
  : values.shapes.split(",").map((shape, i) => {
      const match = /^(\d+)x(\d+)x(\d+)$/.exec(shape.trim());
      if (!match) throw new Error(`--shapes takes shapes like 512x8x1408 (embedding x blocks x ffn), got ${shape}`);
      const [embeddingLength, blockCount, feedForwardLength] = match.slice(1).map(Number) as [number, number, number];
      const path = join(workDir, `model-${i}.gguf`);
      writeTinyGguf(path, { seed: 1, embeddingLength, blockCount, feedForwardLength, contextLength: contextSize });
      return { path, label: `synthetic ${embeddingLength}x${blockCount}x${feedForwardLength}` };
    });

// A fresh user question per run (and a fresh daemon session): each side evaluates the same new user turn after
// the cached system prompt, as for a new conversation; bare and daemon get the same text for the same run.
const question = (i: number) =>
  `Question ${i}: write a long answer about the water, the people and the time of day, one part at a time.`;

interface Sample {
  ttftMs: number;
  tokensPerSecond: number;
  output: number;
}

/** Tokens/s over the stream after the first chunk: (tokens - 1) / (last chunk - first chunk). */
function sample(started: number, first: number | undefined, last: number | undefined, output: number): Sample {
  if (first === undefined || last === undefined) throw new Error("the generation produced no text");
  const span = (last - first) / 1000;
  return { ttftMs: first - started, tokensPerSecond: output > 1 && span > 0 ? (output - 1) / span : 0, output };
}

const median = (xs: number[]) => {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const rated = (samples: Sample[]) => samples.filter((s) => s.output >= MIN_TOKENS);

// ---- bare node-llama-cpp ------------------------------------------------------------------------------------
const lib = await import("node-llama-cpp");
const llama = await lib.getLlama({ build: "never", gpu: false, logLevel: lib.LlamaLogLevel.error });
const system = systemPrompt(agentProfileSchema.parse({}));

async function bare(chat: LlamaChat, sequence: LlamaContextSequence, text: string): Promise<Sample> {
  const history: ChatHistoryItem[] = [
    { type: "system", text: system },
    { type: "user", text },
    { type: "model", response: [] },
  ];
  const before = sequence.tokenMeter.usedOutputTokens;
  let first: number | undefined;
  let last: number | undefined;
  const started = performance.now();
  await chat.generateResponse(history, {
    maxTokens,
    temperature: TEMPERATURE,
    onTextChunk: () => {
      last = performance.now();
      first ??= last;
    },
  });
  return sample(started, first, last, sequence.tokenMeter.usedOutputTokens - before);
}

// ---- the daemon ---------------------------------------------------------------------------------------------
async function startDaemon(modelPath: string, dataDir: string): Promise<{ url: string; token: string }> {
  daemon = spawn(process.execPath, [daemonEntry], {
    env: {
      ...process.env,
      ASSISTANT_DATA_DIR: dataDir, // no llm_router.yaml: a conversation goes to the embedded model
      ASSISTANT_PORT: "0",
      ASSISTANT_LOG: "warn",
      ASSISTANT_EMBEDDED_MODEL_PATH: modelPath,
      ASSISTANT_EMBEDDED_THREADS: forcedThreads ? String(forcedThreads) : "",
      ASSISTANT_EMBEDDED_CONTEXT: String(contextSize),
      ASSISTANT_EMBEDDED_GPU: "0",
      ASSISTANT_MAX_RESPONSE_TOKENS: String(maxTokens),
      ASSISTANT_MEMORY_LEARNING: "0",
    },
    stdio: "ignore",
  });
  let exited = false;
  daemon.once("exit", () => {
    exited = true;
  });
  const infoFile = join(dataDir, "daemon.json");
  while (!existsSync(infoFile)) {
    if (exited) throw new Error("the daemon exited before it was ready");
    await new Promise((r) => setTimeout(r, 20));
  }
  const { port } = JSON.parse(readFileSync(infoFile, "utf8")) as { port: number };
  return { url: `http://127.0.0.1:${port}`, token: readFileSync(join(dataDir, "auth_token"), "utf8").trim() };
}

async function stopDaemon(): Promise<void> {
  const child = daemon;
  daemon = undefined;
  if (!child || child.exitCode !== null) return;
  const stopped = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await stopped;
}

async function throughDaemon(server: { url: string; token: string }, text: string): Promise<Sample> {
  let first: number | undefined;
  let last: number | undefined;
  let output: number | undefined;
  const started = performance.now();
  const res = await fetch(`${server.url}/api/message`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${server.token}` },
    // No session_id: a new session each time, so the prompt is the system prompt and this question only.
    body: JSON.stringify({ message: text, task_type: "conversation", stream: true }),
  });
  if (!res.ok || !res.body) throw new Error(`daemon answered ${res.status}: ${await res.text()}`);
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of res.body) {
    buffered += decoder.decode(chunk as Uint8Array, { stream: true });
    let end = buffered.indexOf("\n\n");
    for (; end >= 0; end = buffered.indexOf("\n\n")) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      if (event === "token") {
        last = performance.now();
        first ??= last;
      } else if (event === "done") {
        const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as { provider: string; usage: { output: number } };
        if (data.provider !== "assistant_embedded") throw new Error(`the reply came from ${data.provider}`);
        output = data.usage.output;
      } else if (event === "error" || event === "reset") throw new Error(`daemon stream: ${block}`);
    }
  }
  if (output === undefined) throw new Error("the daemon stream ended without done");
  return sample(started, first, last, output);
}

async function daemonState(server: { url: string; token: string }) {
  const res = await fetch(`${server.url}/api/router/embedded`, {
    headers: { authorization: `Bearer ${server.token}` },
  });
  return (await res.json()) as {
    threads: number;
    threads_source: string;
    calibration: { duration_ms: number; candidates: Array<{ threads: number; tokens_per_second: number }> } | null;
  };
}

// ---- one model ----------------------------------------------------------------------------------------------
interface Result {
  label: string;
  mb: number;
  bareThreads: number;
  bareByThreads: string;
  daemonThreads: string;
  calibrationMs: number | null;
  bare: Sample[];
  daemon: Sample[];
}

async function benchModel(model: Model, index: number): Promise<Result> {
  const weights = await llama.loadModel({ modelPath: model.path });
  const open = async (threads: number) => {
    const context = await weights.createContext({ contextSize, threads, sequences: 1 });
    const sequence = context.getSequence();
    return { context, sequence, chat: new lib.LlamaChat({ contextSequence: sequence }) };
  };
  // Bare's best thread count: the median of a few generations at each count the daemon's calibration tries.
  const tried: Array<{ threads: number; tps: number }> = [];
  for (const threads of forcedThreads ? [forcedThreads] : threadCandidates()) {
    const side = await open(threads);
    const samples: Sample[] = [];
    for (let i = 0; i < 3; i++) samples.push(await bare(side.chat, side.sequence, question(-100 - i)));
    tried.push({ threads, tps: median(samples.map((s) => s.tokensPerSecond)) });
    side.chat.dispose({ disposeSequence: false });
    await side.context.dispose();
  }
  const best = tried.reduce((a, b) => (b.tps > a.tps ? b : a));
  const side = await open(best.threads);

  const server = await startDaemon(model.path, join(workDir, `data-${index}`));
  // Warm-up: the daemon loads (and calibrates) on its first call; both sides get the system prompt in.
  for (let i = 0; i < warmup; i++) {
    await bare(side.chat, side.sequence, question(-1 - i));
    await throughDaemon(server, question(-1 - i));
  }
  const state = await daemonState(server);
  const bareSamples: Sample[] = [];
  const daemonSamples: Sample[] = [];
  for (let i = 0; i < runs; i++) {
    // Alternating order, so neither side always runs on the caches the other one left.
    if (i % 2 === 0) {
      bareSamples.push(await bare(side.chat, side.sequence, question(i)));
      daemonSamples.push(await throughDaemon(server, question(i)));
    } else {
      daemonSamples.push(await throughDaemon(server, question(i)));
      bareSamples.push(await bare(side.chat, side.sequence, question(i)));
    }
  }
  await stopDaemon();
  side.chat.dispose({ disposeSequence: false });
  await side.context.dispose();
  await weights.dispose();

  if (values.verbose) {
    const show = (s: Sample) => `${s.tokensPerSecond.toFixed(1)} tok/s ${s.ttftMs.toFixed(1)} ms ${s.output} tokens`;
    for (const [i, s] of bareSamples.entries())
      console.log(`${model.label} run ${i}: bare ${show(s)} | daemon ${show(daemonSamples[i]!)}`);
  }
  return {
    label: model.label,
    mb: statSync(model.path).size / 1e6,
    bareThreads: best.threads,
    bareByThreads: tried.map((t) => `${t.threads}: ${t.tps.toFixed(0)}`).join(", "),
    daemonThreads: `${state.threads} (${state.threads_source})`,
    calibrationMs: state.calibration?.duration_ms ?? null,
    bare: bareSamples,
    daemon: daemonSamples,
  };
}

const results: Result[] = [];
for (const [i, model] of models.entries()) results.push(await benchModel(model, i));
await llama.dispose(); // the exit handler removes the temporary directory

console.log(
  `runs: ${runs} per side and model after ${warmup} warm-up, interleaved; max tokens ${maxTokens}, temperature ${TEMPERATURE}, context ${contextSize}; tok/s medians over runs of ${MIN_TOKENS}+ tokens`,
);
const line = (cells: string[], widths: number[]) => cells.map((c, i) => c.padStart(widths[i]!)).join("  ");
const widths = [22, 7, 13, 14, 11, 13, 8, 9, 10, 9];
console.log(
  line(
    [
      "model",
      "MB",
      "bare threads",
      "daemon threads",
      "bare tok/s",
      "daemon tok/s",
      "ratio",
      "bare TTFT",
      "daemon TTFT",
      "verdict",
    ],
    widths,
  ),
);
let missed = false;
for (const r of results) {
  const bareTps = median(rated(r.bare).map((s) => s.tokensPerSecond));
  const daemonTps = median(rated(r.daemon).map((s) => s.tokensPerSecond));
  const ratio = daemonTps / bareTps;
  missed ||= !(ratio >= 0.95);
  console.log(
    line(
      [
        r.label,
        r.mb.toFixed(0),
        String(r.bareThreads),
        r.daemonThreads,
        bareTps.toFixed(1),
        daemonTps.toFixed(1),
        ratio.toFixed(3),
        `${median(r.bare.map((s) => s.ttftMs)).toFixed(1)} ms`,
        `${median(r.daemon.map((s) => s.ttftMs)).toFixed(1)} ms`,
        ratio >= 0.95 ? "ok" : "MISSED",
      ],
      widths,
    ),
  );
  console.log(
    `  bare tok/s by threads: ${r.bareByThreads}; daemon calibration ${r.calibrationMs === null ? "none" : `${r.calibrationMs} ms`}; rated runs bare ${rated(r.bare).length}, daemon ${rated(r.daemon).length}`,
  );
}
console.log(`target: daemon tok/s >= 0.95x bare at its best thread count: ${missed ? "MISSED" : "ok"}`);
