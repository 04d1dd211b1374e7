import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { dataPaths } from "../../../src/config/paths.ts";
import { type LlmRouterInput, llmRouterSchema } from "../../../src/config/schemas/llmRouter.ts";
import { readSettings } from "../../../src/config/settings.ts";
import type { EmbeddedRuntime, LanguageModelV4Prompt, ProviderContext } from "../../../src/llm/types.ts";
import { vaultWithSecrets } from "../../helpers/vault.ts";

// Shared by the provider tests: a ProviderContext from a router file with a real vault, and stream readers.

export interface ContextOptions {
  env?: NodeJS.ProcessEnv;
  /** Vault entries by name. */
  secrets?: Record<string, string>;
}

export function providerContext(router: LlmRouterInput = {}, options: ContextOptions = {}): ProviderContext {
  const paths = dataPaths(mkdtempSync(join(tmpdir(), "assistant-provider-")));
  return {
    config: llmRouterSchema.parse(router),
    env: options.env ?? {},
    settings: readSettings(options.env ?? {}),
    vault: vaultWithSecrets(paths, options.secrets),
    paths,
    // HTTP providers never touch the embedded runtime.
    embedded: {} as EmbeddedRuntime,
  };
}

export const PROMPT: LanguageModelV4Prompt = [
  { role: "system", content: "Be brief." },
  { role: "user", content: [{ type: "text", text: "Say hello to the tests" }] },
];
/** promptWords() of PROMPT as the test servers count it: one token per word. */
export const PROMPT_WORDS = 7;

export async function readParts(
  stream: ReadableStream<LanguageModelV4StreamPart>,
): Promise<LanguageModelV4StreamPart[]> {
  const parts: LanguageModelV4StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

export function textDeltas(parts: LanguageModelV4StreamPart[]): string[] {
  return parts.flatMap((p) => (p.type === "text-delta" ? [p.delta] : []));
}

export function finishOf(parts: LanguageModelV4StreamPart[]) {
  const finish = parts.find((p) => p.type === "finish");
  if (finish?.type !== "finish") throw new Error(`no finish part in ${JSON.stringify(parts)}`);
  return finish;
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Runs `fn` and returns what it threw (fails the test when it does not throw). */
export async function rejection(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}
