import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dataPaths } from "../../../src/config/paths.ts";
import { type LlmRouterInput, llmRouterSchema } from "../../../src/config/schemas/llmRouter.ts";
import { readSettings } from "../../../src/config/settings.ts";
import { Budget } from "../../../src/llm/budget.ts";
import { ModelDownloader } from "../../../src/llm/embedded/download.ts";
import { createEmbeddedRuntime } from "../../../src/llm/embedded/runtime.ts";
import { RouterMetrics } from "../../../src/llm/metrics.ts";
import { LlmRouter } from "../../../src/llm/router.ts";
import type { LanguageModelV4Prompt, LlmEvent, LlmRequest } from "../../../src/llm/types.ts";
import type { Logger } from "../../../src/log/logger.ts";
import { openDatabase } from "../../../src/store/database.ts";
import { AppError } from "../../../src/util/errors.ts";
import { vaultWithSecrets } from "../../helpers/vault.ts";

// A real router over real providers; the remote ends are the scripted protocol servers of ../servers.

export interface TestRouter {
  router: LlmRouter;
  metrics: RouterMetrics;
  budget: Budget;
}

export function testRouter(
  file: LlmRouterInput,
  options: { env?: NodeJS.ProcessEnv; secrets?: Record<string, string>; logger?: Logger } = {},
): TestRouter {
  const dir = mkdtempSync(join(tmpdir(), "assistant-router-"));
  const env = options.env ?? {};
  const settings = readSettings(env); // as the daemon parses its environment
  const metrics = new RouterMetrics(true);
  const budget = new Budget(openDatabase(join(dir, "assistant.db")), settings);
  const router = new LlmRouter({
    loadConfig: () => llmRouterSchema.parse(file),
    env,
    settings,
    vault: vaultWithSecrets(dataPaths(dir), options.secrets),
    paths: dataPaths(dir),
    // A real runtime with no model file: it is "unavailable", as on a machine that never downloaded one.
    embedded: createEmbeddedRuntime({
      settings: readSettings({ ASSISTANT_EMBEDDED_MODEL_PATH: join(dir, "missing.gguf") }),
      paths: dataPaths(dir),
      downloader: new ModelDownloader(),
    }),
    metrics,
    budget,
    ...(options.logger ? { logger: options.logger } : {}),
    backoffBaseMs: 20,
  });
  return { router, metrics, budget };
}

export const PROMPT: LanguageModelV4Prompt = [{ role: "user", content: [{ type: "text", text: "hello there" }] }];

export async function collect(router: LlmRouter, request: Partial<LlmRequest> = {}): Promise<LlmEvent[]> {
  const events: LlmEvent[] = [];
  for await (const event of router.stream({ taskType: "conversation", prompt: PROMPT, ...request })) events.push(event);
  return events;
}

export const textOf = (events: LlmEvent[]) => {
  let text = "";
  for (const e of events) {
    if (e.type === "text") text += e.delta;
    if (e.type === "reset") text = "";
  }
  return text;
};

export const routesOf = (events: LlmEvent[]) =>
  events.flatMap((e) => (e.type === "route" ? [`${e.provider}/${e.model}`] : []));

export async function failureOf(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected the request to fail");
}
