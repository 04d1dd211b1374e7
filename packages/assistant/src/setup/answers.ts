import { httpUrl } from "../config/schemas/common.ts";
import { AppError } from "../util/errors.ts";

// The answers `assistant init` collects, with one parser per question so the interactive CLI can re-ask a
// single question and the service can validate answers that came from a script or the API.

export const LANGUAGES = ["en", "fr"] as const;
export type Language = (typeof LANGUAGES)[number];

/** The provider the `conversation` route starts with; the embedded model and core always stay as fallbacks. */
export const PROVIDER_CHOICES = ["embedded", "local_server", "cloud_a", "cloud_b"] as const;
export type ProviderChoice = (typeof PROVIDER_CHOICES)[number];

export interface InitAnswers {
  name: string;
  language: Language;
  provider: ProviderChoice;
  /** Only for local_server; default LOCAL_SERVER_URL. */
  local_server_url?: string;
  /** The model of the chosen provider (not used for embedded, which uses the catalogue default). */
  model?: string;
}

export const LOCAL_SERVER_URL = "http://localhost:11434";

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

/** Accepts the provider name or its number in the list shown by `assistant init` (1-based). */
export function parseProvider(text: string): ProviderChoice {
  const value = text.trim().toLowerCase();
  const byNumber = /^\d+$/.test(value) ? PROVIDER_CHOICES[Number(value) - 1] : undefined;
  const found = byNumber ?? PROVIDER_CHOICES.find((p) => p === value);
  if (!found)
    throw invalid("provider", `expected one of ${PROVIDER_CHOICES.join(", ")} (or 1 to ${PROVIDER_CHOICES.length})`);
  return found;
}

export function parseUrl(text: string): string {
  const value = text.trim();
  const result = httpUrl.safeParse(value);
  if (!result.success)
    throw invalid("local_server_url", result.error.issues[0]?.message ?? "expected an http:// or https:// URL");
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
  if (provider === "local_server") answers.local_server_url = parseUrl(input.local_server_url ?? LOCAL_SERVER_URL);
  if (provider !== "embedded") {
    const model = input.model ?? DEFAULT_MODELS[provider];
    if (model === undefined) throw invalid("model", `${provider} needs a model name (as your provider names it)`);
    answers.model = parseModel(model);
  }
  return answers;
}
