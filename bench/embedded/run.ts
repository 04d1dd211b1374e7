// bench/embedded: the embedded model through the daemon (POST /api/message, stream: true) vs bare node-llama-cpp in
// this process, on the same GGUF, context size and thread count, interleaved in one run. Target (issue
// benchmark): daemon tokens/s at least 0.95x bare, and the same for time to first token (bare TTFT / daemon TTFT
// >= 0.95, so the daemon's first token is at most ~5% later). The model is a synthetic llama GGUF with random
// weights (test/fixtures/tinyGguf.ts); the default shape (416 MB of F32, ~75 tok/s on one thread of a small VM) is
// near the catalogue models' size, and --shape 512x8x1408 gives a faster one. --model takes a real GGUF instead.
// The daemon adds a fixed few ms per request (HTTP, session rows, routing), so the TTFT ratio rises with the
// model's own TTFT; the table prints that added time too.
// Run: npm run bench:embedded [-- --runs 10 --threads 1 --tokens 128 --shape 1024x8x2816 --context 2048 --verbose]
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { ChatHistoryItem } from "node-llama-cpp";
import { systemPrompt } from "../../packages/assistant/src/agent/prompt.ts";
import { agentProfileSchema } from "../../packages/assistant/src/config/schemas/agentProfile.ts";
import { writeTinyGguf } from "../../packages/assistant/test/fixtures/tinyGguf.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    threads: { type: "string", default: "1" },
    tokens: { type: "string", default: "128" },
    context: { type: "string", default: "2048" },
    /** Synthetic model: embedding length x blocks x feed-forward length. */
    shape: { type: "string", default: "1024x8x2816" },
    /** A real GGUF file instead of the synthetic model. */
    model: { type: "string" },
    /** Print every run's numbers too. */
    verbose: { type: "boolean", default: false },
  },
});
const runs = Number(values.runs);
const warmup = Number(values.warmup);
const threads = Number(values.threads);
const maxTokens = Number(values.tokens);
const contextSize = Number(values.context);
const root = resolve(import.meta.dirname, "..", "..");
const daemonEntry = join(root, "packages", "assistant", "bin", "assistant-daemon.mjs");
// The embedded adapter's sampling when the route sets none (src/llm/embedded/languageModel.ts).
const TEMPERATURE = 0.7;

const workDir = mkdtempSync(join(tmpdir(), "assistant-bench-embedded-"));
let modelPath = values.model ? resolve(values.model) : "";
let modelLabel = modelPath;
if (!modelPath) {
  const match = /^(\d+)x(\d+)x(\d+)$/.exec(values.shape);
  if (!match)
    throw new Error(`--shape must look like 512x8x1408 (embedding x blocks x feed-forward), got ${values.shape}`);
  const [embeddingLength, blockCount, feedForwardLength] = match.slice(1).map(Number) as [number, number, number];
  modelPath = join(workDir, "model.gguf");
  writeTinyGguf(modelPath, { seed: 1, embeddingLength, blockCount, feedForwardLength, contextLength: contextSize });
  modelLabel = `synthetic llama F32 ${embeddingLength}-dim x ${blockCount} blocks, ffn ${feedForwardLength}`;
}
const modelMb = statSync(modelPath).size / 1e6;
let daemon: ChildProcess | undefined;
process.on("exit", () => {
  daemon?.kill("SIGTERM");
  rmSync(workDir, { recursive: true, force: true });
});

// A fresh user question per run (and a fresh daemon session): each side evaluates the same new user turn after
// the cached system prompt, as for a new conversation; bare and daemon get the same text for the same run.
const question = (i: number) =>
  `Question ${i}: write a long answer about the water, the people and the time of day, one part at a time.`;

// ---- bare node-llama-cpp ------------------------------------------------------------------------------------
const lib = await import("node-llama-cpp");
const llama = await lib.getLlama({ build: "never", gpu: false, logLevel: lib.LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({ contextSize, threads, sequences: 1 });
const sequence = context.getSequence();
const chat = new lib.LlamaChat({ contextSequence: sequence });

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

async function bare(text: string): Promise<Sample> {
  const history: ChatHistoryItem[] = [
    { type: "system", text: systemPrompt(agentProfileSchema.parse({})) },
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
const dataDir = join(workDir, "data"); // no llm_router.yaml: a conversation goes to the embedded model
daemon = spawn(process.execPath, [daemonEntry], {
  env: {
    ...process.env,
    ASSISTANT_DATA_DIR: dataDir,
    ASSISTANT_PORT: "0",
    ASSISTANT_LOG: "warn",
    ASSISTANT_EMBEDDED_MODEL_PATH: modelPath,
    ASSISTANT_EMBEDDED_THREADS: String(threads),
    ASSISTANT_EMBEDDED_CONTEXT: String(contextSize),
    ASSISTANT_EMBEDDED_GPU: "0",
    ASSISTANT_MAX_RESPONSE_TOKENS: String(maxTokens),
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
const token = readFileSync(join(dataDir, "auth_token"), "utf8").trim();
const daemonUrl = `http://127.0.0.1:${port}`;

async function throughDaemon(text: string): Promise<Sample> {
  let first: number | undefined;
  let last: number | undefined;
  let output: number | undefined;
  const started = performance.now();
  const res = await fetch(`${daemonUrl}/api/message`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
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

// ---- interleaved runs ---------------------------------------------------------------------------------------
// Warm-up: the daemon loads the model on its first call; both sides get their caches and the system prompt in.
for (let i = 0; i < warmup; i++) {
  await bare(question(-1 - i));
  await throughDaemon(question(-1 - i));
}
const bareSamples: Sample[] = [];
const daemonSamples: Sample[] = [];
for (let i = 0; i < runs; i++) {
  // Alternating order, so neither side always runs on the caches the other one left.
  if (i % 2 === 0) {
    bareSamples.push(await bare(question(i)));
    daemonSamples.push(await throughDaemon(question(i)));
  } else {
    daemonSamples.push(await throughDaemon(question(i)));
    bareSamples.push(await bare(question(i)));
  }
}

if (values.verbose) {
  const show = (s: Sample) => `${s.tokensPerSecond.toFixed(1)} tok/s ${s.ttftMs.toFixed(1)} ms ${s.output} tokens`;
  for (const [i, s] of bareSamples.entries())
    console.log(`run ${i}: bare ${show(s)} | daemon ${show(daemonSamples[i]!)}`);
}
const median = (xs: number[]) => {
  const sorted = [...xs].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
// A random-weight model sometimes samples an end token early; a rate over a handful of tokens is noise.
const MIN_TOKENS = 16;
const stats = (samples: Sample[]) => ({
  tps: median(samples.filter((s) => s.output >= MIN_TOKENS).map((s) => s.tokensPerSecond)),
  rated: samples.filter((s) => s.output >= MIN_TOKENS).length,
  ttft: median(samples.map((s) => s.ttftMs)),
  output: median(samples.map((s) => s.output)),
});
const b = stats(bareSamples);
const d = stats(daemonSamples);
const tpsRatio = d.tps / b.tps;
const ttftRatio = b.ttft / d.ttft;
const verdict = (ratio: number) => (ratio >= 0.95 ? "ok" : "MISSED");
const row = (name: string, s: typeof b) =>
  `${name.padEnd(8)}${s.tps.toFixed(1).padStart(10)}${s.ttft.toFixed(1).padStart(12)}${String(s.output).padStart(10)}`;

console.log(`model: ${modelLabel} (${modelMb.toFixed(0)} MB), context ${contextSize}, threads ${threads}`);
console.log(
  `runs: ${runs} each after ${warmup} warm-up, interleaved (tok/s over runs of ${MIN_TOKENS}+ tokens); max tokens ${maxTokens}, temperature ${TEMPERATURE}`,
);
console.log(`medians    tok/s     TTFT ms    tokens`);
console.log(row("bare", b));
console.log(row("daemon", d));
if (b.rated < runs / 2 || d.rated < runs / 2) {
  console.log(`warning: few runs reached ${MIN_TOKENS} tokens (bare ${b.rated}, daemon ${d.rated}); tok/s is noisy`);
}
console.log(`tok/s ratio daemon/bare ${tpsRatio.toFixed(3)} (target >= 0.95) ${verdict(tpsRatio)}`);
console.log(
  `TTFT ratio bare/daemon  ${ttftRatio.toFixed(3)} (target >= 0.95) ${verdict(ttftRatio)}; the daemon adds ${(d.ttft - b.ttft).toFixed(1)} ms`,
);

const stopped = new Promise((r) => (exited ? r(undefined) : daemon.once("exit", r)));
daemon.kill("SIGTERM");
await stopped;
chat.dispose({ disposeSequence: false });
await context.dispose();
await model.dispose();
await llama.dispose(); // the exit handler removes the temporary directory
