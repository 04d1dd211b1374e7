import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { historyFor } from "../../src/agent/compaction.ts";
import { SessionStore } from "../../src/agent/sessions.ts";
import { readSettings } from "../../src/config/settings.ts";
import { EventLog } from "../../src/events/eventLog.ts";
import { LEARN_AFTER_TURNS, MemoryService } from "../../src/memory/memoryService.ts";
import { MemoryStore } from "../../src/memory/store.ts";
import { VectorIndex } from "../../src/memory/vectorIndex.ts";
import { type Db, openDatabase } from "../../src/store/database.ts";
import { tempDataDir, until } from "../helpers/daemon.ts";
import { testRouter } from "../llm/router/helpers.ts";
import { bagOfWordsVector, type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";

// The memory service over a real router (the remote model is the scripted OpenAI-protocol server), a real
// SQLite file and the real session store.

let server: ScriptedServer;
const open: Array<{ db: Db; memory: MemoryService }> = [];

beforeAll(async () => {
  server = await startOpenAiServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  for (const { db, memory } of open.splice(0)) {
    await memory.close();
    db.close();
  }
});

const silentLogger = { warn: () => {}, info: () => {} };

function setup(env: NodeJS.ProcessEnv = {}) {
  const db = openDatabase(join(tempDataDir("assistant-memory-"), "assistant.db"));
  const { router } = testRouter(
    {
      providers: { lowbit_server: { base_url: `${server.url}/v1` } },
      task_types: {
        system: { primary: { provider: "lowbit_server", model: "system-model" } },
        conversation: { primary: { provider: "lowbit_server", model: "chat-model" } },
      },
    },
    { env },
  );
  const sessions = new SessionStore(db);
  const events = new EventLog(db);
  const memory = new MemoryService({
    db,
    router,
    sessions,
    events,
    settings: readSettings(env),
    logger: silentLogger,
    embeddedPresent: () => false,
  });
  open.push({ db, memory });
  return { db, sessions, events, memory };
}

const extraction = (...memories: Array<Record<string, string>>) => ({
  kind: "reply" as const,
  text: JSON.stringify({ memories }),
});
const systemRequests = () => server.requests.filter((r) => (r.body as { model?: string })?.model === "system-model");
const requestText = (r: { body: unknown }) => JSON.stringify(r.body);

describe("learning", () => {
  it("learns after a reply, keeps the source, and never re-reads a message", async () => {
    const { sessions, memory, events } = setup();
    const session = sessions.create();
    sessions.append(session.id, { role: "user", content: "My sister Alice lives in Lyon." });
    const reply = sessions.append(session.id, { role: "assistant", content: "Noted!" });
    server.enqueue(
      extraction({ kind: "person", subject: "Alice", content: "Alice is the user's sister; she lives in Lyon." }),
    );
    const before = systemRequests().length;
    memory.learnAfter(session.id, "task_1");
    await memory.idle();
    expect(systemRequests().length).toBe(before + 1);
    expect(requestText(systemRequests().at(-1)!)).toContain("My sister Alice lives in Lyon.");

    const [item] = memory.overview().recent;
    expect(item).toMatchObject({
      kind: "person",
      subject: "Alice",
      origin: "learning",
      source: { session_id: session.id, task_id: "task_1" },
    });
    expect(item!.source.message_id).toBeTruthy();
    expect(memory.store.learnedThrough(session.id)).toBe(reply.seq);
    expect(events.list({ kinds: ["memory_learned"], limit: 10 })).toHaveLength(1);

    // Nothing new to read: no model call.
    memory.learnAfter(session.id);
    await memory.idle();
    expect(systemRequests().length).toBe(before + 1);
  });

  it("pausing stops extraction, and what was said while paused is never learned", async () => {
    const { sessions, memory } = setup();
    const session = sessions.create();
    memory.setLearning(false);
    expect(memory.settings().learning_enabled).toBe(false);
    sessions.append(session.id, { role: "user", content: "My PIN code is 4321, keep it private." });
    const before = systemRequests().length;
    memory.learnAfter(session.id);
    await memory.idle();
    expect(systemRequests().length).toBe(before);
    expect(memory.overview().total).toBe(0);

    memory.setLearning(true);
    sessions.append(session.id, { role: "user", content: "I prefer tea to coffee." });
    server.enqueue(extraction({ kind: "preference", subject: "drinks", content: "The user prefers tea to coffee." }));
    memory.learnAfter(session.id);
    await memory.idle();
    const request = requestText(systemRequests().at(-1)!);
    expect(request).toContain("I prefer tea to coffee.");
    expect(request).not.toContain("4321");
    expect(memory.overview().total).toBe(1);
  });

  it("flushes unread messages into memory before compaction folds them", async () => {
    const { sessions, memory } = setup();
    const session = sessions.create();
    const filler = "and then we talked about many other things at length ".repeat(12);
    sessions.append(session.id, { role: "user", content: `My passport is in the blue folder. ${filler}` });
    sessions.append(session.id, { role: "assistant", content: `Understood. ${filler}` });
    sessions.append(session.id, { role: "user", content: `Let us plan the trip. ${filler}` });
    sessions.append(session.id, { role: "assistant", content: "Sure." });
    server.enqueue(
      extraction({ kind: "fact", subject: "passport", content: "The user's passport is in the blue folder." }),
      { kind: "reply", text: "- passport: blue folder" },
    );
    const before = systemRequests().length;
    const history = await historyFor(
      { sessions, router: testRouterFor(), beforeFold: (id, through) => memory.flush(id, through) },
      session.id,
      256,
    );
    const calls = systemRequests().slice(before);
    expect(calls).toHaveLength(2);
    // The extraction ran first, on the messages about to be folded, and stored them as "flush".
    expect(requestText(calls[0]!)).toContain("long-term memory");
    expect(requestText(calls[1]!)).toContain("Summarise the conversation");
    expect(memory.overview().recent[0]).toMatchObject({
      origin: "flush",
      content: "The user's passport is in the blue folder.",
    });
    expect(history.summary).toBe("- passport: blue folder");
  });
});

describe("learning off the critical path", () => {
  /** A turn: the user's line and a reply, then what the task runner does after the reply. */
  function turn(sessions: SessionStore, memory: MemoryService, sessionId: string, said: string) {
    sessions.append(sessionId, { role: "user", content: said });
    sessions.append(sessionId, { role: "assistant", content: "Okay." });
    memory.learnAfter(sessionId);
  }
  const calls = (before: number) => systemRequests().length - before;

  it(`reads ${LEARN_AFTER_TURNS} turns that may teach something in one call, without waiting for a quiet spell`, async () => {
    const { sessions, memory } = setup({ ASSISTANT_MEMORY_LEARN_IDLE_SECS: "600" });
    const session = sessions.create();
    const before = systemRequests().length;
    const facts = ["I live in Nantes.", "My cat is called Miso.", "I work nights.", "We own a boat.", "I hate olives."];
    for (const fact of facts.slice(0, -1)) turn(sessions, memory, session.id, fact);
    await new Promise((r) => setTimeout(r, 100));
    expect(calls(before)).toBe(0); // four turns: still waiting for the quiet spell
    server.enqueue(extraction({ kind: "preference", subject: "olives", content: "The user hates olives." }));
    turn(sessions, memory, session.id, facts.at(-1)!);
    await until(
      () => Promise.resolve(memory.overview().total),
      (n) => n === 1,
    );
    expect(calls(before)).toBe(1);
    const request = requestText(systemRequests().at(-1)!);
    for (const fact of facts) expect(request).toContain(fact);
    expect(memory.store.learnedThrough(session.id)).toBe(sessions.after(session.id, 0).at(-1)!.seq);
  });

  it("learns once the session has been quiet for ASSISTANT_MEMORY_LEARN_IDLE_SECS, all its turns in one call", async () => {
    const { sessions, memory } = setup({ ASSISTANT_MEMORY_LEARN_IDLE_SECS: "0.3" });
    const session = sessions.create();
    const before = systemRequests().length;
    server.enqueue(extraction({ kind: "fact", subject: "home", content: "The user lives in Nantes." }));
    turn(sessions, memory, session.id, "I live in Nantes.");
    turn(sessions, memory, session.id, "My sister visits on Sundays.");
    await new Promise((r) => setTimeout(r, 150));
    expect(calls(before)).toBe(0);
    await until(
      () => Promise.resolve(memory.overview().total),
      (n) => n === 1,
    );
    expect(calls(before)).toBe(1);
    expect(requestText(systemRequests().at(-1)!)).toContain("My sister visits on Sundays.");
  });

  it("sessions due together are read in one call, each memory sourced from its own session", async () => {
    const { sessions, memory } = setup({ ASSISTANT_MEMORY_LEARN_IDLE_SECS: "600" });
    const alice = sessions.create();
    const work = sessions.create();
    const before = systemRequests().length;
    turn(sessions, memory, alice.id, "My sister Alice lives in Lyon.");
    turn(sessions, memory, work.id, "I work nights at the hospital.");
    server.enqueue(
      extraction(
        { kind: "fact", subject: "work", content: "The user works nights at the hospital." },
        { kind: "person", subject: "Alice", content: "Alice is the user's sister; she lives in Lyon." },
      ),
    );
    await memory.idle();
    expect(calls(before)).toBe(1);
    const request = requestText(systemRequests().at(-1)!);
    expect(request).toContain("Conversation 1:");
    expect(request).toContain("Conversation 2:");
    const sourceOf = (subject: string) => memory.overview().recent.find((m) => m.subject === subject)!.source;
    expect(sourceOf("Alice").session_id).toBe(alice.id);
    expect(sourceOf("work").session_id).toBe(work.id);
    for (const session of [alice, work]) {
      expect(memory.store.learnedThrough(session.id)).toBe(sessions.after(session.id, 0).at(-1)!.seq);
    }
  });

  it("small talk is marked read without a model call; a first-person fact is not", async () => {
    const { sessions, memory } = setup();
    const session = sessions.create();
    const before = systemRequests().length;
    for (const said of ["hello", "Thanks!", "what time is it in tokyo?", "Write a haiku about rain.", "merci !"]) {
      turn(sessions, memory, session.id, said);
    }
    await memory.idle();
    expect(calls(before)).toBe(0);
    expect(memory.store.learnedThrough(session.id)).toBe(sessions.after(session.id, 0).at(-1)!.seq);

    server.enqueue(extraction({ kind: "fact", subject: "home", content: "The user lives in Lyon." }));
    turn(sessions, memory, session.id, "J'habite à Lyon depuis mars.");
    await memory.idle();
    expect(calls(before)).toBe(1);
    expect(requestText(systemRequests().at(-1)!)).not.toContain("haiku"); // read already, never sent
    expect(memory.overview().total).toBe(1);
  });

  it("a new message postpones the session's pending learning, and aborts a running one without losing its turns", async () => {
    const { sessions, memory } = setup({ ASSISTANT_MEMORY_LEARN_IDLE_SECS: "0.3" });
    const session = sessions.create();
    const before = systemRequests().length;
    turn(sessions, memory, session.id, "I play the cello.");
    await new Promise((r) => setTimeout(r, 200));
    memory.userWrote(session.id); // the quiet spell starts over
    await new Promise((r) => setTimeout(r, 200));
    expect(calls(before)).toBe(0);

    // The quiet spell ends: a slow extraction starts, then the person writes again.
    server.enqueue({ kind: "reply", text: Array(30).fill(" "), chunkDelayMs: 50 });
    await until(
      () => Promise.resolve(calls(before)),
      (n) => n === 1,
    );
    memory.userWrote(session.id);
    sessions.append(session.id, { role: "user", content: "My teacher is Ms Ortiz." });
    await new Promise((r) => setTimeout(r, 100));
    expect(memory.store.learnedThrough(session.id)).toBe(0); // nothing marked read that was not
    server.enqueue(
      extraction(
        { kind: "fact", subject: "cello", content: "The user plays the cello." },
        { kind: "person", subject: "Ms Ortiz", content: "Ms Ortiz is the user's teacher." },
      ),
    );
    sessions.append(session.id, { role: "assistant", content: "Nice." });
    memory.learnAfter(session.id);
    await until(
      () => Promise.resolve(memory.overview().total),
      (n) => n === 2,
    );
    expect(calls(before)).toBe(2);
    const retry = requestText(systemRequests().at(-1)!);
    expect(retry).toContain("I play the cello.");
    expect(retry).toContain("My teacher is Ms Ortiz.");
    expect(memory.store.learnedThrough(session.id)).toBe(sessions.after(session.id, 0).at(-1)!.seq);
  });

  it(`after the person writes on, the next batch needs ${LEARN_AFTER_TURNS} more turns or a quiet spell`, async () => {
    const { sessions, memory } = setup({ ASSISTANT_MEMORY_LEARN_IDLE_SECS: "600" });
    const session = sessions.create();
    const before = systemRequests().length;
    server.enqueue({ kind: "reply", text: Array(30).fill(" "), chunkDelayMs: 50 });
    for (let i = 0; i < LEARN_AFTER_TURNS; i++)
      turn(sessions, memory, session.id, `I collect stamps from country ${i}.`);
    await until(
      () => Promise.resolve(calls(before)),
      (n) => n === 1,
    );
    memory.userWrote(session.id); // aborts the extraction streaming
    turn(sessions, memory, session.id, "I also collect coins.");
    await new Promise((r) => setTimeout(r, 300));
    expect(calls(before)).toBe(1); // not started again at once: the next one after 5 more turns or a quiet spell
    expect(memory.store.learnedThrough(session.id)).toBe(0);
    server.enqueue(extraction({ kind: "preference", subject: "collections", content: "The user collects stamps." }));
    await memory.idle();
    expect(calls(before)).toBe(2);
    expect(requestText(systemRequests().at(-1)!)).toContain("I also collect coins.");
    expect(memory.store.learnedThrough(session.id)).toBe(sessions.after(session.id, 0).at(-1)!.seq);
  });

  it("close() resolves promptly while an extraction streams, and leaves its turns unread", async () => {
    const { sessions, memory } = setup();
    const session = sessions.create();
    const before = systemRequests().length;
    server.enqueue({ kind: "reply", text: Array(100).fill(" "), chunkDelayMs: 50 });
    turn(sessions, memory, session.id, "I am allergic to peanuts.");
    const idle = memory.idle();
    await until(
      () => Promise.resolve(calls(before)),
      (n) => n === 1,
    );
    const startedAt = performance.now();
    await memory.close();
    await idle;
    expect(performance.now() - startedAt).toBeLessThan(500);
    expect(memory.store.learnedThrough(session.id)).toBe(0);
  });
});

function testRouterFor() {
  return testRouter({
    providers: { lowbit_server: { base_url: `${server.url}/v1` } },
    task_types: { system: { primary: { provider: "lowbit_server", model: "system-model" } } },
  }).router;
}

describe("retrieval", () => {
  it("puts relevant memories in the prompt within the token budget, and nothing when none match", async () => {
    const { memory } = setup({ ASSISTANT_MEMORY_PROMPT_TOKENS: "40" });
    memory.remember({ kind: "fact", content: "The user's car is a green Volvo estate." });
    memory.remember({ kind: "fact", content: "The user's car keys are in the kitchen drawer." });
    memory.remember({ kind: "preference", content: "The user likes jazz music." });
    const block = await memory.promptContext("Where are my car keys?");
    expect(block).toContain("kitchen drawer");
    expect(block).not.toContain("jazz");
    // 40 tokens hold the header's items only up to the budget.
    expect(block!.split("\n").filter((l) => l.startsWith("- ")).length).toBeLessThanOrEqual(2);
    expect(await memory.promptContext("Tell me a joke")).toBeNull();
  });

  it("embeds memories through a provider and searches by vector too", async () => {
    const { memory } = setup({ ASSISTANT_MEMORY_EMBEDDINGS: "lowbit_server:embed-model" });
    memory.remember({ kind: "fact", content: "The spare key hides under the garden gnome." });
    memory.remember({ kind: "fact", content: "The wifi password is on the fridge." });
    await memory.idle();
    const overview = memory.overview();
    expect(overview.vectors).toMatchObject({
      embedded: 2,
      pending: 0,
      embedder: "lowbit_server:embed-model",
      dims: 64,
      search: "exact",
    });
    expect(memory.settings().embeddings).toMatchObject({ status: "vectors", embedder: "lowbit_server:embed-model" });
    const hits = await memory.search("garden gnome key");
    expect(hits[0]!.memory.content).toContain("garden gnome");
    expect(hits[0]!.matched).toEqual(expect.arrayContaining(["text", "vector"]));
  });

  it("trains the vector lists in the background once the store passes 10,000 vectors", async () => {
    const { db, memory } = setup({ ASSISTANT_MEMORY_EMBEDDINGS: "lowbit_server:embed-model" });
    // 10,000 memories already embedded by this embedder (written directly: embedding them over HTTP is slow).
    const store = new MemoryStore(db);
    const index = new VectorIndex(db);
    index.prepare("lowbit_server:embed-model", 64);
    const items: Array<{ seq: number; vector: number[] }> = [];
    db.transaction(() => {
      for (let i = 0; i < 10_000; i++) {
        const content = `note ${i} about topic ${i % 97} and place ${i % 89}`;
        items.push({
          seq: store.upsert({ kind: "fact", content, origin: "tool" }).record.seq,
          vector: bagOfWordsVector(content),
        });
      }
    })();
    index.put(items);
    memory.remember({ kind: "fact", content: "The spare key hides under the garden gnome." });
    await memory.idle();
    expect(memory.overview().vectors).toMatchObject({ embedded: 10_001, pending: 0, search: "lists" });
    const meta = JSON.parse(
      (db.prepare("SELECT value FROM settings WHERE key = 'memory.vectors'").get() as { value: string }).value,
    );
    expect(meta).toMatchObject({ trained_at: 10_001 });
    expect(meta.moved_through).toBeUndefined();
    expect((db.prepare("SELECT COUNT(*) AS n FROM memory_vector_centroids").get() as { n: number }).n).toBeGreaterThan(
      1,
    );
    const hits = await memory.search("spare key garden gnome");
    expect(hits[0]!.memory.content).toContain("garden gnome");
    expect(hits[0]!.matched).toEqual(expect.arrayContaining(["text", "vector"]));
  });

  it("falls back to text search when the embedder fails, and says why", async () => {
    const { memory } = setup({ ASSISTANT_MEMORY_EMBEDDINGS: "lowbit_server:embed-model" });
    server.enqueue({ kind: "status", status: 400, path: "/v1/embeddings" });
    memory.remember({ kind: "fact", content: "The boat is moored at pier nine." });
    await memory.idle();
    expect(memory.overview().vectors).toMatchObject({ embedded: 0, pending: 1 });
    expect(memory.settings().embeddings.reason).toMatch(/embedding failed/);
    const hits = await memory.search("boat pier");
    expect(hits[0]!.memory.content).toContain("pier nine");
    expect(hits[0]!.matched).toEqual(["text"]);
  });

  it("links people to the items that mention them; ASSISTANT_GRAPH_EXPAND=1 returns those one hop away", async () => {
    const { memory } = setup({ ASSISTANT_GRAPH_EXPAND: "1" });
    memory.remember({ kind: "fact", content: "Bob plays the cello." });
    memory.remember({ kind: "person", subject: "Bob", content: "Bob is the user's neighbour." });
    const hits = await memory.search("who is my neighbour");
    expect(hits.map((h) => h.memory.content)).toEqual(["Bob is the user's neighbour.", "Bob plays the cello."]);
    expect(hits[1]!.matched).toEqual(["linked"]);
    expect(memory.settings().graph_expand).toBe(true);

    const { memory: plain } = setup(); // the default: matches only
    plain.remember({ kind: "fact", content: "Bob plays the cello." });
    plain.remember({ kind: "person", subject: "Bob", content: "Bob is the user's neighbour." });
    expect((await plain.search("who is my neighbour")).map((h) => h.memory.content)).toEqual([
      "Bob is the user's neighbour.",
    ]);
    expect(plain.settings().graph_expand).toBe(false);
  });
});
