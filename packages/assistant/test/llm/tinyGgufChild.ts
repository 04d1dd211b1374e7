// Child process of tinyGguf.test.ts: loads the GGUF file at argv[2] with node-llama-cpp on the CPU, runs a chat
// prompt and a JSON-schema-constrained prompt, and prints one JSON line with what it saw. A child, because a
// malformed GGUF file can abort the whole process inside llama.cpp.
import { getLlama, LlamaChatSession, LlamaLogLevel } from "node-llama-cpp";

const modelPath = process.argv[2]!;
const started = performance.now();
// build "never": use only the prebuilt binaries from the @node-llama-cpp/* packages, never download or compile.
const llama = await getLlama({ build: "never", gpu: false, logLevel: LlamaLogLevel.error });
const llamaMs = performance.now() - started;

const loadStarted = performance.now();
const model = await llama.loadModel({ modelPath });
const loadMs = performance.now() - loadStarted;
const helloWorldTokens = model.tokenize("hello world").length;

// One thread and a small context: the default thread count is very slow on a two-core machine.
const context = await model.createContext({ contextSize: 256, threads: 1 });
const session = new LlamaChatSession({ contextSequence: context.getSequence() });
const chatWrapper = session.chatWrapper.wrapperName;

const answer = await session.prompt("hello", { maxTokens: 8 });

session.resetChatHistory();
let generated = 0;
const rateStarted = performance.now();
await session.prompt("write a long answer", { maxTokens: 48, onToken: (tokens) => (generated += tokens.length) });
const tokensPerSecond = generated / ((performance.now() - rateStarted) / 1000);

const schema = {
  type: "object",
  properties: { name: { type: "string", maxLength: 8 }, ok: { type: "boolean" } },
} as const;
const grammar = await llama.createGrammarForJsonSchema(schema);
session.resetChatHistory();
const json = await session.prompt("answer in json", { grammar, maxTokens: 64 });

await context.dispose();
await model.dispose();
await llama.dispose();
process.stdout.write(
  `${JSON.stringify({ llamaMs, loadMs, helloWorldTokens, chatWrapper, answer, generated, tokensPerSecond, json })}\n`,
);
