// bench/learning: learning off the critical path (issue 16, part 1). A realistic mix of chat sessions keeps one
// local model slot steadily busy; two real daemons, one learning and one with learning off, run the same
// workload, interleaved, repetition after repetition:
//   1. LLM calls per user turn with learning on (target <= 1.2 on average): every call the model received
//      counts, replies, extractions and the retries of preempted extractions alike;
//   2. user-turn latency (POST /api/message, wait: true) with learning on vs off (target: p50 within 5 %).
// The model is a one-slot server, as a CPU machine runs one: a FIFO proxy lets one request at a time reach the
// scripted OpenAI-protocol server (test/llm/servers/openaiServer.ts), after a fixed prompt-processing time; the
// reply streams a word every --word-ms. A client that hangs up frees the slot at once (llama-server stops a
// request whose client went away). The daemons declare the server with `parallel: 1`.
// Sessions: --lanes sessions at a time, each lane starting a new one when its previous ends; each session has
// 3-9 turns drawn from small talk, questions and first-person facts, with a person's pause between turns.
// Run: npm run bench:learning [-- --reps 3 --lanes 3 --sessions 3 --idle-secs 1.5 --word-ms 12 --prefill-ms 100]
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { startOpenAiServer } from "../../packages/assistant/test/llm/servers/openaiServer.ts";
import { type BenchDaemon, startBenchDaemon } from "../daemon.ts";

const { values } = parseArgs({
  options: {
    reps: { type: "string", default: "3" },
    lanes: { type: "string", default: "3" },
    sessions: { type: "string", default: "3" },
    "idle-secs": { type: "string", default: "1.5" },
    "word-ms": { type: "string", default: "12" },
    "prefill-ms": { type: "string", default: "100" },
    "pause-ms": { type: "string", default: "500-1500" },
  },
});
const reps = Number(values.reps);
const lanes = Number(values.lanes);
const sessionsPerLane = Number(values.sessions);
const idleSecs = Number(values["idle-secs"]);
const wordMs = Number(values["word-ms"]);
const prefillMs = Number(values["prefill-ms"]);
const [pauseMin, pauseMax] = values["pause-ms"].split("-").map(Number) as [number, number];

let seed = 7;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;

// What people say: small talk and questions teach nothing durable, facts do (about a third of the turns).
const SMALL_TALK = ["hello", "thanks!", "ok", "great, thank you", "merci !", "good morning", "cool"];
const QUESTIONS = [
  "what time is it in tokyo?",
  "how long should I boil an egg?",
  "can you explain recursion simply?",
  "write a haiku about rain",
  "what is the capital of peru?",
  "how do I reverse a list in python?",
  "quelle heure est-il ?",
];
const FACTS = [
  "My sister Alice lives in Lyon.",
  "I work night shifts at the hospital.",
  "I'm allergic to peanuts.",
  "We are moving to Nantes in June.",
  "My daughter is called Zoé.",
  "J'habite à Bordeaux depuis deux ans.",
  "I prefer short answers.",
];
/** A message tagged `[tag]`, so the bench can check that every fact said was read by a finished extraction. */
function message(tag: string): string {
  const r = random();
  return `${r < 0.3 ? pick(SMALL_TALK) : r < 0.65 ? pick(QUESTIONS) : pick(FACTS)} [${tag}]`;
}
const isFact = (text: string) => FACTS.some((fact) => text.startsWith(fact));

// ---- the one-slot model ---------------------------------------------------------------------------------------
interface OneSlotModel {
  url: string;
  /** Requests the model started (replies, extractions, retries) and those the client abandoned midway. */
  counts: { replies: number; extractions: number; abandoned: number };
  /** The request bodies of the extractions that ran to the end. */
  read: string[];
  close(): Promise<void>;
}

async function startOneSlotModel(): Promise<OneSlotModel> {
  const replies = await startOpenAiServer({
    defaultBehaviour: {
      kind: "reply",
      text: "Sure, here is a short and helpful answer to what you asked just now.",
      chunkDelayMs: wordMs,
    },
  });
  // An extraction answers about as many tokens as a reply, as JSON.
  const extractions = await startOpenAiServer({
    defaultBehaviour: {
      kind: "reply",
      text: [
        '{"memories": [',
        ...Array(12).fill(" "),
        '{"kind": "fact", "subject": "bench", "content": "The user said something worth remembering."}',
        "]}",
      ],
      chunkDelayMs: wordMs,
    },
  });
  const counts = { replies: 0, extractions: 0, abandoned: 0 };
  const read: string[] = [];
  const line: Array<() => void> = [];
  let busy = false;
  const next = () => {
    busy = false;
    const start = line.shift();
    if (start) {
      busy = true;
      start();
    }
  };
  const serve = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    let released = false;
    const release = () => {
      if (!released) {
        released = true;
        next();
      }
    };
    if (res.destroyed) return release(); // the client went away while waiting for the slot
    const model = (JSON.parse(body.toString("utf8")) as { model?: string }).model;
    const upstream = model === "system-model" ? extractions : replies;
    if (model === "system-model") counts.extractions++;
    else counts.replies++;
    let finished = false;
    const forward = httpRequest(`${upstream.url}${req.url}`, { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 500, up.headers);
      up.pipe(res);
      up.on("end", () => {
        finished = true;
        if (upstream === extractions) read.push(body.toString("utf8"));
        release();
      });
    });
    forward.on("error", release);
    res.on("close", () => {
      if (!finished) {
        counts.abandoned++;
        forward.destroy();
      }
      release();
    });
    // Prompt processing holds the slot before the first token.
    setTimeout(() => forward.end(body), prefillMs);
  };
  const proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (!req.url?.endsWith("/chat/completions")) {
        res.writeHead(404).end();
        return;
      }
      line.push(() => serve(req, res, body));
      if (!busy) next();
    });
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    counts,
    read,
    close: async () => {
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
      await replies.close();
      await extractions.close();
    },
  };
}

// ---- the workload ---------------------------------------------------------------------------------------------
interface Side {
  name: string;
  daemon: BenchDaemon;
  model: OneSlotModel;
}

async function startSide(name: string, learning: boolean): Promise<Side> {
  const model = await startOneSlotModel();
  const yaml =
    `providers:\n  lowbit_server:\n    base_url: ${model.url}/v1\n    parallel: 1\ntask_types:\n` +
    "  conversation:\n    primary: {provider: lowbit_server, model: chat-model}\n" +
    "  system:\n    primary: {provider: lowbit_server, model: system-model}\n";
  const daemon = await startBenchDaemon(`learning-${name}`, yaml, {
    ASSISTANT_MEMORY_LEARNING: learning ? "1" : "0",
    ASSISTANT_MEMORY_LEARN_IDLE_SECS: String(idleSecs),
    ASSISTANT_MEMORY_EMBEDDINGS: "off",
    ASSISTANT_EMBEDDED_MODEL_PATH: "/nonexistent/bench.gguf",
  });
  return { name, daemon, model };
}

/** One session script per lane slot, the same for both sides of a repetition. */
type Script = string[][][];
function script(rep: number): Script {
  return Array.from({ length: lanes }, (_, lane) =>
    Array.from({ length: sessionsPerLane }, (_, session) =>
      Array.from({ length: 3 + Math.floor(random() * 7) }, (_, turn) => message(`r${rep}l${lane}s${session}t${turn}`)),
    ),
  );
}

async function run(side: Side, plan: Script, pauses: number[]) {
  const { daemon, model } = side;
  const headers = { authorization: `Bearer ${daemon.token}`, "content-type": "application/json" };
  const before = { ...model.counts };
  const latencies: number[] = [];
  let turns = 0;
  let pauseIndex = 0;
  await Promise.all(
    plan.map(async (sessions, lane) => {
      await new Promise((r) => setTimeout(r, lane * 300)); // staggered, so the load is steady
      for (const said of sessions) {
        let sessionId: string | undefined;
        for (const text of said) {
          const started = performance.now();
          const response = await fetch(`${daemon.url}/api/message`, {
            method: "POST",
            headers,
            body: JSON.stringify({ message: text, wait: true, ...(sessionId ? { session_id: sessionId } : {}) }),
          });
          const body = (await response.json()) as { session_id: string; status: string };
          if (!response.ok || body.status !== "completed") throw new Error(`turn failed: ${JSON.stringify(body)}`);
          latencies.push(performance.now() - started);
          turns++;
          sessionId = body.session_id;
          await new Promise((r) => setTimeout(r, pauses[pauseIndex++ % pauses.length]));
        }
      }
    }),
  );
  // The last sessions go quiet: their learning is part of the cost of these turns.
  let last = -1;
  await new Promise((r) => setTimeout(r, idleSecs * 1000 + 300));
  while (model.counts.extractions !== last) {
    last = model.counts.extractions;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const calls = model.counts.replies - before.replies + (model.counts.extractions - before.extractions);
  // Nothing lost: each fact said was in an extraction that ran to the end.
  const facts = plan.flat(2).filter(isFact);
  const read = facts.filter((fact) => model.read.some((body) => body.includes(fact.slice(fact.lastIndexOf("[")))));
  return {
    facts: facts.length,
    factsRead: read.length,
    turns,
    calls,
    extractions: model.counts.extractions - before.extractions,
    preempted: model.counts.abandoned - before.abandoned,
    latencies,
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

const on = await startSide("on", true);
const off = await startSide("off", false);
const results = { on: [] as Awaited<ReturnType<typeof run>>[], off: [] as Awaited<ReturnType<typeof run>>[] };
try {
  for (let rep = 0; rep < reps; rep++) {
    const plan = script(rep);
    const pauses = Array.from({ length: 500 }, () => pauseMin + random() * (pauseMax - pauseMin));
    // Alternate which side goes first, so drift on a shared machine hits both alike.
    for (const side of rep % 2 === 0 ? [on, off] : [off, on]) {
      const result = await run(side, plan, pauses);
      results[side === on ? "on" : "off"].push(result);
      console.log(
        `rep ${rep + 1} learning ${side.name}: ${result.turns} turns, ${result.calls} model calls ` +
          `(${result.extractions} extractions, ${result.preempted} preempted` +
          `${side === on ? `; facts read by a finished extraction ${result.factsRead}/${result.facts}` : ""}), ` +
          "latency p50 " +
          `${median(result.latencies).toFixed(0)} ms, p95 ${pct(result.latencies, 95).toFixed(0)} ms`,
      );
    }
  }
} finally {
  await on.daemon.stop();
  await off.daemon.stop();
  await on.model.close();
  await off.model.close();
}

const perTurn = (r: { calls: number; turns: number }) => r.calls / r.turns;
const callsOn = median(results.on.map(perTurn));
const callsOff = median(results.off.map(perTurn));
const p50On = median(results.on.map((r) => median(r.latencies)));
const p50Off = median(results.off.map((r) => median(r.latencies)));
const p95On = median(results.on.map((r) => pct(r.latencies, 95)));
const p95Off = median(results.off.map((r) => pct(r.latencies, 95)));
const ratio = p50On / p50Off;
console.log(
  `\nmedians of ${reps} repetitions, ${lanes} sessions at a time on one model slot:\n` +
    `  LLM calls per user turn: learning on ${callsOn.toFixed(2)} (target <= 1.2: ${callsOn <= 1.2 ? "met" : "NOT met"}), ` +
    `learning off ${callsOff.toFixed(2)}\n` +
    `  user-turn latency: learning on p50 ${p50On.toFixed(0)} ms / p95 ${p95On.toFixed(0)} ms, learning off p50 ` +
    `${p50Off.toFixed(0)} ms / p95 ${p95Off.toFixed(0)} ms; p50 ratio ${ratio.toFixed(3)} ` +
    `(target within 5 %: ${ratio <= 1.05 ? "met" : "NOT met"})`,
);
