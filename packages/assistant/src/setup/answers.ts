import { httpUrl } from "../config/schemas/common.ts";
import { AppError } from "../util/errors.ts";

// The answers `assistant init` collects, with one parser per question so the interactive CLI can re-ask a
// single question and the service can validate answers that came from a script or the API.

export const LANGUAGES = ["en", "fr"] as const;
export type Language = (typeof LANGUAGES)[number];

/** The provider the `conversation` route starts with; the embedded model and core always stay as fallbacks. */
export const PROVIDER_CHOICES = ["embedded", "local_server", "lowbit_server", "cloud_a", "cloud_b"] as const;
export type ProviderChoice = (typeof PROVIDER_CHOICES)[number];
/** The providers that are a server the person runs, whose URL init asks for. */
export type LocalServerChoice = "local_server" | "lowbit_server";

export interface InitAnswers {
  name: string;
  language: Language;
  provider: ProviderChoice;
  /** Only for a local server (local_server, lowbit_server); default that kind's usual URL. */
  server_url?: string;
  /** The model of the chosen provider (not used for embedded, which uses the catalogue default). */
  model?: string;
}

export const LOCAL_SERVER_URL = "http://localhost:11434";
/** llama.cpp's llama-server listens there by default. */
export const LOWBIT_SERVER_URL = "http://localhost:8080/v1";

/**
 * What init offers, in order: three kinds of local server, two of which are the OpenAI-compatible provider with
 * the usual URL of the server named (LM Studio listens on 1234, vLLM on 8000, llama-server on 8080).
 */
export const PROVIDER_MENU: ReadonlyArray<{ name: string; provider: ProviderChoice; url?: string; text: string }> = [
  { name: "embedded", provider: "embedded", text: "a local model inside the assistant: no account, no cloud call" },
  { name: "ollama", provider: "local_server", url: LOCAL_SERVER_URL, text: "an Ollama server you run" },
  {
    name: "openai_server",
    provider: "lowbit_server",
    url: "http://localhost:1234/v1",
    text: "an OpenAI-compatible server you run: LM Studio (port 1234), vLLM (8000)…",
  },
  {
    name: "llama_server",
    provider: "lowbit_server",
    url: LOWBIT_SERVER_URL,
    text: "llama.cpp's llama-server (port 8080)",
  },
  {
    name: "cloud_a",
    provider: "cloud_a",
    text: "a cloud provider; its key goes into the encrypted vault, never into a file",
  },
  { name: "cloud_b", provider: "cloud_b", text: "another cloud provider; same as above" },
];

/** A model a fresh install of each provider is likely to have; cloud_b has no obvious one, so it is asked for. */
export const DEFAULT_MODELS: Partial<Record<ProviderChoice, string>> = {
  local_server: "llama3.2",
  cloud_a: "gpt-4o-mini",
};

export const DEFAULT_ANSWERS: InitAnswers = { name: "Assistant", language: "en", provider: "embedded" };

/** The vault key a cloud provider's route refers to; the key itself is never written to a file. */
export function vaultKeyFor(provider: "cloud_a" | "cloud_b"): string {
  return `${provider}_api_key`;
}

function invalid(field: string, message: string): AppError {
  return new AppError("invalid_request", `${field}: ${message}`, { field });
}

export function parseName(text: string): string {
  const name = text.trim();
  if (name === "") throw invalid("name", "must not be empty");
  if (name.length > 64) throw invalid("name", "at most 64 characters");
  if (/[\p{Cc}]/u.test(name)) throw invalid("name", "must be one line of text");
  return name;
}

export function parseLanguage(text: string): Language {
  const value = text.trim().toLowerCase();
  const found = LANGUAGES.find((lang) => value === lang || (value.length > 2 && value.startsWith(`${lang}_`)));
  if (!found) throw invalid("language", `expected one of ${LANGUAGES.join(", ")}`);
  return found;
}

/** A line of `assistant init`'s menu: its number (1-based), its name, or a provider id. */
export function parseMenuChoice(text: string): (typeof PROVIDER_MENU)[number] {
  const value = text.trim().toLowerCase();
  const found = /^\d+$/.test(value)
    ? PROVIDER_MENU[Number(value) - 1]
    : (PROVIDER_MENU.find((entry) => entry.name === value) ?? PROVIDER_MENU.find((entry) => entry.provider === value));
  if (!found) {
    const names = PROVIDER_MENU.map((entry) => entry.name).join(", ");
    throw invalid("provider", `expected one of ${names} (or 1 to ${PROVIDER_MENU.length})`);
  }
  return found;
}

export function parseProvider(text: string): ProviderChoice {
  return parseMenuChoice(text).provider;
}

export function isLocalServer(provider: ProviderChoice): provider is LocalServerChoice {
  return provider === "local_server" || provider === "lowbit_server";
}

export function parseUrl(text: string): string {
  const value = text.trim();
  const result = httpUrl.safeParse(value);
  if (!result.success)
    throw invalid("server_url", result.error.issues[0]?.message ?? "expected an http:// or https:// URL");
  return value;
}

export function parseModel(text: string): string {
  const value = text.trim();
  if (!/^\S{1,200}$/.test(value)) throw invalid("model", "expected a model name without spaces, for example llama3.2");
  return value;
}

/** Validates a full set of answers (from any source) and fills the defaults the chosen provider needs. */
export function normalizeAnswers(input: Partial<InitAnswers>): InitAnswers {
  const provider = input.provider === undefined ? DEFAULT_ANSWERS.provider : parseProvider(input.provider);
  const answers: InitAnswers = {
    name: input.name === undefined ? DEFAULT_ANSWERS.name : parseName(input.name),
    language: input.language === undefined ? DEFAULT_ANSWERS.language : parseLanguage(input.language),
    provider,
  };
  if (isLocalServer(provider)) {
    answers.server_url = parseUrl(
      input.server_url ?? (provider === "local_server" ? LOCAL_SERVER_URL : LOWBIT_SERVER_URL),
    );
  }
  if (provider !== "embedded") {
    const model = input.model ?? DEFAULT_MODELS[provider];
    if (model === undefined) throw invalid("model", `${provider} needs a model name (as your provider names it)`);
    answers.model = parseModel(model);
  }
  return answers;
}
