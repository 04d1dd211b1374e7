// bench/router: latency the daemon adds to a chat request. The same request goes straight to a local
// OpenAI-compatible server and through the daemon (POST /api/message, wait: true, routed to that server as
// lowbit_server), interleaved in one run so both see the same machine state. Target (issue 3): added latency
// p50 < 2 ms and p99 < 10 ms.
// Run: npm run bench:router [-- --requests 300]
import { parseArgs } from "node:util";
import { startOpenAiServer } from "../../packages/assistant/test/llm/servers/openaiServer.ts";
import { benchRouterYaml, startBenchDaemon } from "../daemon.ts";

const { values } = parseArgs({ options: { requests: { type: "string", default: "300" } } });
const requests = Number(values.requests);
const server = await startOpenAiServer({ defaultBehaviour: { kind: "reply", text: "The quick brown fox jumps." } });
// Memory learning (one more model call after each reply, measured by bench:memory) is off: this bench times the
// turn itself against the model server.
const daemon = await startBenchDaemon("router", benchRouterYaml(server.url, ["conversation"]), {
  ASSISTANT_MEMORY_LEARNING: "0",
});
const { url: daemonUrl, token } = daemon;

const message = "Tell me something short.";
async function direct(): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer none" },
    body: JSON.stringify({ model: "bench-model", stream: true, messages: [{ role: "user", content: message }] }),
  });
  await res.text();
  return performance.now() - started;
}
async function throughDaemon(sessionId?: string): Promise<{ ms: number; session: string }> {
  const started = performance.now();
  const res = await fetch(`${daemonUrl}/api/message`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({
      message,
      task_type: "conversation",
      wait: true,
      ...(sessionId ? { session_id: sessionId } : {}),
    }),
  });
  const body = (await res.json()) as { session_id: string; reply: string };
  if (!res.ok || !body.reply) throw new Error(`daemon answered ${res.status}: ${JSON.stringify(body)}`);
  return { ms: performance.now() - started, session: body.session_id };
}

// Warm-up: JIT, connection pools, the provider module's first import.
for (let i = 0; i < 30; i++) {
  await direct();
  await throughDaemon();
}
const directMs: number[] = [];
const daemonMs: number[] = [];
for (let i = 0; i < requests; i++) {
  // A fresh session each time, so the history (and the prompt) stays the same size as the direct request's.
  if (i % 2 === 0) {
    directMs.push(await direct());
    daemonMs.push((await throughDaemon()).ms);
  } else {
    daemonMs.push((await throughDaemon()).ms);
    directMs.push(await direct());
  }
}
const pct = (xs: number[], p: number) => {
  const sorted = [...xs].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const added = (p: number) => pct(daemonMs, p) - pct(directMs, p);
console.log(`requests: ${requests} each, interleaved`);
console.log(`direct  p50 ${pct(directMs, 50).toFixed(2)} ms  p99 ${pct(directMs, 99).toFixed(2)} ms`);
console.log(`daemon  p50 ${pct(daemonMs, 50).toFixed(2)} ms  p99 ${pct(daemonMs, 99).toFixed(2)} ms`);
console.log(`added   p50 ${added(50).toFixed(2)} ms (target < 2)  p99 ${added(99).toFixed(2)} ms (target < 10)`);
await daemon.stop();
await server.close();
