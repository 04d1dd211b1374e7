// bench/soak: the daemon's settled memory over a long steady chat load. Two daemons take the same load, turn
// for turn, interleaved: the daemon as the supervisor and the CLI start it (MALLOC_ARENA_MAX=2, see
// packages/assistant/src/daemon/README.md) and the baseline with glibc's default malloc arenas (up to 8 per
// core). At each checkpoint both are forced through a full GC (HeapProfiler.collectGarbage over the inspector,
// no HTTP endpoint) and read from /proc/<pid>/status: VmRSS split into RssAnon (heap, malloc, SQLite's cache)
// and RssFile (mapped code), with the V8 heap, the memory V8 holds outside it, the live SQLite statements and
// the connections' page cache sizes beside it.
// Targets: settled RSS grows < 10 % from turn 500 to turn 5,000, stays within a few % from 5,000 to 20,000, and
// stays under 200 MB.
// Load: 8 clients per daemon, a new session every 50 turns (history and compaction run too), memory learning
// on (the default), an instant scripted OpenAI-protocol model.
// Run: npm run bench:soak [-- --at 500,5000,20000 --clients 8]
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { parseArgs } from "node:util";
import { startOpenAiServer } from "../../packages/assistant/test/llm/servers/openaiServer.ts";
import { type BenchDaemon, benchRouterYaml, startBenchDaemon } from "../daemon.ts";

const { values } = parseArgs({
  options: {
    at: { type: "string", default: "500,5000,20000" },
    clients: { type: "string", default: "8" },
  },
});
const checkpoints = values.at.split(",").map(Number);
const clients = Number(values.clients);
if (checkpoints.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error("--at takes turn counts: 500,5000");

const agent = new Agent({ keepAlive: true });

function post(url: string, token: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${token}`,
          "content-length": String(Buffer.byteLength(body)),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${res.statusCode} ${text}`))));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** A DevTools protocol session on the daemon's inspector (the address it printed on stderr). */
interface Inspector {
  call(method: string, params?: object): Promise<unknown>;
  close(): void;
}

async function inspector(daemon: BenchDaemon): Promise<Inspector> {
  const address = () => /ws:\/\/127\.0\.0\.1:\d+\/[\w-]+/.exec(daemon.stderr())?.[0];
  while (!address()) await new Promise((r) => setTimeout(r, 20));
  const url = address()!;
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let next = 1;
  const pending = new Map<number, (result: unknown) => void>();
  socket.onmessage = (message) => {
    const { id, result } = JSON.parse(String(message.data)) as { id?: number; result?: unknown };
    if (id !== undefined) pending.get(id)?.(result);
  };
  return {
    call: (method, params = {}) =>
      new Promise((resolve) => {
        const id = next++;
        pending.set(id, resolve);
        socket.send(JSON.stringify({ id, method, params }));
      }),
    // An open inspector session keeps the daemon from exiting on SIGTERM.
    close: () => socket.close(),
  };
}

interface Reading {
  rss: number;
  anon: number;
  file: number;
  heap: number;
  /** Memory V8 holds outside its heap (Buffers, ArrayBuffers), MiB. */
  external: number;
  /** Live better-sqlite3 statements (the statement() cache holds most), and the connections' page cache sizes. */
  statements: number;
  cacheSizes: number[];
}

// Counts live SQLite statements in the daemon through the inspector (Runtime.queryObjects), for the
// explanation of native memory: better-sqlite3 is loaded from the daemon's own node_modules.
const SQLITE_PROTOTYPES = `(() => {
  const load = process.getBuiltinModule("node:module").createRequire(process.argv[1]);
  return load("better-sqlite3").prototype;
})()`;

const MiB = 1024 * 1024;

async function settledMemory(daemon: BenchDaemon, { call }: Inspector): Promise<Reading> {
  // Learning after the last replies, then two full collections (the second frees what the first finalised).
  await new Promise((r) => setTimeout(r, 3000));
  await call("HeapProfiler.collectGarbage");
  await call("HeapProfiler.collectGarbage");
  await new Promise((r) => setTimeout(r, 500));
  const status = readFileSync(`/proc/${daemon.pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)![1]) / 1024;
  const { usedSize } = (await call("Runtime.getHeapUsage")) as { usedSize: number };
  const value = async (expression: string) =>
    ((await call("Runtime.evaluate", { expression, returnByValue: true })) as { result: { value: unknown } }).result
      .value;
  const usage = (await value("process.memoryUsage()")) as { external: number };
  const objectId = async (expression: string) =>
    ((await call("Runtime.evaluate", { expression })) as { result: { objectId: string } }).result.objectId;
  const instances = async (prototype: string) =>
    ((await call("Runtime.queryObjects", { prototypeObjectId: prototype })) as { objects: { objectId: string } })
      .objects.objectId;
  const onEach = async (array: string, body: string) =>
    (
      (await call("Runtime.callFunctionOn", { objectId: array, functionDeclaration: body, returnByValue: true })) as {
        result: { value: unknown };
      }
    ).result.value;
  const databases = await instances(await objectId(SQLITE_PROTOTYPES));
  const cacheSizes = (await onEach(
    databases,
    "function () { return this.filter((d) => d.open).map((d) => { try { return d.pragma('cache_size', { simple: true }); } catch (e) { return String(e.message); } }); }",
  )) as number[] | undefined;
  const statementPrototype = (await call("Runtime.callFunctionOn", {
    objectId: databases,
    functionDeclaration: "function () { return Object.getPrototypeOf(this.find((d) => d.open).prepare('SELECT 1')); }",
  })) as { result: { objectId: string } };
  const statements = (await onEach(
    await instances(statementPrototype.result.objectId),
    "function () { return this.length; }",
  )) as number;
  return {
    rss: kib("VmRSS"),
    anon: kib("RssAnon"),
    file: kib("RssFile"),
    heap: usedSize / MiB,
    external: usage.external / MiB,
    statements,
    cacheSizes: cacheSizes ?? [],
  };
}

const model = await startOpenAiServer({
  defaultBehaviour: { kind: "reply", text: "Noted, I will keep that in mind." },
});
const yaml = benchRouterYaml(model.url, ["conversation", "system"]);
const inspect = ["--inspect=127.0.0.1:0"];
const daemons: Array<{ name: string; daemon: BenchDaemon; inspector: Inspector; readings: Reading[] }> = [];
for (const [name, env] of [
  ["daemon (MALLOC_ARENA_MAX=2)", { MALLOC_ARENA_MAX: "2" }],
  ["baseline (glibc default arenas)", { MALLOC_ARENA_MAX: "" }],
] as const) {
  const daemon = await startBenchDaemon(`soak-${daemons.length}`, yaml, env, inspect);
  daemons.push({ name, daemon, inspector: await inspector(daemon), readings: [] });
}

let done = 0;
const started = performance.now();
for (const target of checkpoints) {
  const turns = target - done;
  // Both daemons take the same turns at the same time: neither gets a quieter machine.
  await Promise.all(
    daemons.map(({ daemon }) => {
      let next = 0;
      return Promise.all(
        Array.from({ length: clients }, async () => {
          let session: string | undefined;
          while (next < turns) {
            const i = done + next++;
            const body = JSON.stringify({
              message: `Note ${i}: my favourite colour today is ${["green", "blue", "red"][i % 3]}.`,
              task_type: "conversation",
              wait: true,
              ...(session && i % 50 !== 0 ? { session_id: session } : {}),
            });
            session = (
              JSON.parse(await post(`${daemon.url}/api/message`, daemon.token, body)) as { session_id: string }
            ).session_id;
          }
        }),
      );
    }),
  );
  done = target;
  for (const d of daemons) d.readings.push(await settledMemory(d.daemon, d.inspector));
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  console.log(`turn ${target} (${seconds} s)`);
  for (const { name, readings } of daemons) {
    const r = readings.at(-1)!;
    console.log(
      `   ${name.padEnd(32)} RSS ${r.rss.toFixed(1)} MiB (anon ${r.anon.toFixed(1)}, file ${r.file.toFixed(1)}), V8 heap ${r.heap.toFixed(1)} MiB, ` +
        `external ${r.external.toFixed(1)} MiB, ${r.statements} SQLite statements, page cache ${r.cacheSizes.join("/")}`,
    );
  }
}
const growth = (from: Reading, to: Reading) => `${(((to.rss - from.rss) / from.rss) * 100).toFixed(1)} %`;
console.log("settled RSS growth (targets: < 10 % from the first checkpoint to the second, within a few % after)");
for (const { name, readings } of daemons) {
  const steps = readings.slice(1).map((r, i) => `${checkpoints[i]}->${checkpoints[i + 1]}: ${growth(readings[i]!, r)}`);
  console.log(
    `   ${name.padEnd(32)} ${steps.join(", ")}; max RSS ${Math.max(...readings.map((r) => r.rss)).toFixed(1)} MiB (target < 200)`,
  );
}
for (const { daemon, inspector } of daemons) {
  inspector.close();
  await daemon.stop();
}
await model.close();
