import type { ModelOptions, RouteProvider } from "../config/schemas/llmRouter.ts";
import { LOCAL_PROVIDERS } from "./routing.ts";
import type { TokenUsage } from "./types.ts";

// Prices used to estimate cost (metrics, budget, `max_cost_per_request`). Local providers cost nothing. For cloud
// models the router file wins (`model_options.<model>.extra`: `pricing: {prompt, completion}` in USD per token as
// OpenRouter reports it and `config models fetch` stores it, or `price_input_per_mtok`/`price_output_per_mtok`),
// then this table of list prices in USD per million tokens. An unknown price is null: the cost is then unknown,
// shown as such, and never blocks a call.

export interface Price {
  inputPerMTok: number;
  outputPerMTok: number;
}

const LIST_PRICES: Record<string, Price> = {
  "gpt-4o": { inputPerMTok: 2.5, outputPerMTok: 10 },
  "gpt-4o-mini": { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  "gpt-4.1": { inputPerMTok: 2, outputPerMTok: 8 },
  "gpt-4.1-mini": { inputPerMTok: 0.4, outputPerMTok: 1.6 },
  "gpt-4.1-nano": { inputPerMTok: 0.1, outputPerMTok: 0.4 },
  "gpt-5": { inputPerMTok: 1.25, outputPerMTok: 10 },
  "gpt-5-mini": { inputPerMTok: 0.25, outputPerMTok: 2 },
  "gpt-5-nano": { inputPerMTok: 0.05, outputPerMTok: 0.4 },
  o3: { inputPerMTok: 2, outputPerMTok: 8 },
  "o3-mini": { inputPerMTok: 1.1, outputPerMTok: 4.4 },
  "o4-mini": { inputPerMTok: 1.1, outputPerMTok: 4.4 },
  "claude-sonnet-4": { inputPerMTok: 3, outputPerMTok: 15 },
  "claude-opus-4": { inputPerMTok: 15, outputPerMTok: 75 },
  "claude-3.5-haiku": { inputPerMTok: 0.8, outputPerMTok: 4 },
  "gemini-2.5-pro": { inputPerMTok: 1.25, outputPerMTok: 10 },
  "gemini-2.5-flash": { inputPerMTok: 0.3, outputPerMTok: 2.5 },
};

function num(value: unknown): number | undefined {
  const n = typeof value === "string" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : undefined;
}

function fromOptions(options: ModelOptions | undefined): Price | null {
  const extra = options?.extra;
  if (!extra) return null;
  const pricing = extra.pricing as { prompt?: unknown; completion?: unknown } | undefined;
  const perToken = [num(pricing?.prompt), num(pricing?.completion)];
  if (perToken[0] !== undefined && perToken[1] !== undefined) {
    return { inputPerMTok: perToken[0] * 1e6, outputPerMTok: perToken[1] * 1e6 };
  }
  const perMTok = [num(extra.price_input_per_mtok), num(extra.price_output_per_mtok)];
  if (perMTok[0] !== undefined && perMTok[1] !== undefined)
    return { inputPerMTok: perMTok[0], outputPerMTok: perMTok[1] };
  return null;
}

export function priceFor(
  provider: RouteProvider,
  model: string,
  modelOptions: Record<string, ModelOptions>,
): Price | null {
  if (LOCAL_PROVIDERS.has(provider)) return { inputPerMTok: 0, outputPerMTok: 0 };
  const configured = fromOptions(modelOptions[model]);
  if (configured) return configured;
  // OpenRouter ids carry a vendor prefix ("openai/gpt-4o-mini"); dated snapshots a suffix ("gpt-4o-2024-08-06").
  const bare = model.includes("/") ? model.slice(model.lastIndexOf("/") + 1) : model;
  if (LIST_PRICES[bare]) return LIST_PRICES[bare];
  const prefix = Object.keys(LIST_PRICES)
    .filter((name) => bare.startsWith(`${name}-`))
    .sort((a, b) => b.length - a.length)[0];
  return prefix ? LIST_PRICES[prefix]! : null;
}

export function costOf(price: Price | null, usage: TokenUsage): number {
  if (!price) return 0;
  return (usage.input * price.inputPerMTok + usage.output * price.outputPerMTok) / 1e6;
}

/** A rough token count for estimates made before a call (about four characters per token). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
