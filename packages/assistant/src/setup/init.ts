import { existsSync } from "node:fs";
import { basename } from "node:path";
import { STARTER_TOOLS_POLICY } from "../config/defaults.ts";
import { readEnvFile, writeEnvValue } from "../config/envFile.ts";
import type { DataPaths } from "../config/paths.ts";
import { type AgentProfileInput, agentProfileSchema } from "../config/schemas/agentProfile.ts";
import { writeFileAtomic } from "../util/atomicWrite.ts";
import { type InitAnswers, isLocalServer, type Language, normalizeAnswers, vaultKeyFor } from "./answers.ts";
import { ensureDataDir } from "./dataDir.ts";
import { routerYamlFor } from "./routerFile.ts";

// `assistant init`: a fresh data directory with the files a person would otherwise write by hand. It never
// replaces a file that exists unless asked to (force), and it never writes a secret: cloud keys go to the vault
// later, and the files only refer to them (vault://<name>).

export type InitAction = "created" | "overwritten" | "updated" | "skipped";

export interface InitFileResult {
  file: string;
  action: InitAction;
  /** Why a file was skipped. */
  reason?: string;
}

export interface InitResult {
  dataDir: string;
  answers: InitAnswers;
  files: InitFileResult[];
  nextSteps: string[];
}

export interface InitOptions {
  /** Replace existing files (and an existing ASSISTANT_LANG) instead of skipping them. */
  force?: boolean;
}

const PROFILE_TEXT: Record<Language, Omit<AgentProfileInput, "name">> = {
  en: {
    role: "Personal assistant",
    personality: "Helpful, concise and honest.",
    rules: ["Answer in English unless asked otherwise.", "Say so plainly when you do not know something."],
  },
  fr: {
    role: "Assistant personnel",
    personality: "Serviable, concis et honnête.",
    rules: ["Réponds en français sauf demande contraire.", "Dis-le simplement quand tu ne sais pas quelque chose."],
  },
};

export function initDataDir(paths: DataPaths, input: Partial<InitAnswers>, options: InitOptions = {}): InitResult {
  const answers = normalizeAnswers(input); // before touching the disk: a bad answer changes nothing
  const force = options.force === true;
  ensureDataDir(paths.dataDir);

  const profile = agentProfileSchema.parse({ name: answers.name, ...PROFILE_TEXT[answers.language] });
  const files: InitFileResult[] = [
    writeFile(paths.routerFile, routerYamlFor(answers, paths.routerFile), force),
    writeFile(paths.toolsPolicy, STARTER_TOOLS_POLICY, force),
    writeFile(paths.agentProfile, `${JSON.stringify(profile, null, 2)}\n`, force),
    setLanguage(paths.assistantEnv, answers.language, force),
  ];
  return { dataDir: paths.dataDir, answers, files, nextSteps: nextSteps(answers, files) };
}

function writeFile(path: string, content: string, force: boolean): InitFileResult {
  const file = basename(path);
  const exists = existsSync(path);
  if (exists && !force) return { file, action: "skipped", reason: "already exists (--force replaces it)" };
  writeFileAtomic(path, content, 0o600);
  return { file, action: exists ? "overwritten" : "created" };
}

function setLanguage(path: string, language: Language, force: boolean): InitFileResult {
  const file = basename(path);
  const exists = existsSync(path);
  const current = readEnvFile(path).findLast((entry) => entry.key === "ASSISTANT_LANG")?.value;
  if (current === language) return { file, action: "skipped", reason: `ASSISTANT_LANG is already ${language}` };
  if (current !== undefined && !force) {
    return { file, action: "skipped", reason: `ASSISTANT_LANG is already set to "${current}" (--force replaces it)` };
  }
  // The env file keeps its other lines and comments; only ASSISTANT_LANG is set.
  if (!exists) writeFileAtomic(path, "# assistant.env: KEY=value per line, loaded at daemon start.\n", 0o600);
  writeEnvValue(path, "ASSISTANT_LANG", language);
  return { file, action: exists ? "updated" : "created" };
}

function nextSteps(answers: InitAnswers, files: InitFileResult[]): string[] {
  const steps: string[] = [];
  if (answers.provider === "cloud_a" || answers.provider === "cloud_b") {
    const key = vaultKeyFor(answers.provider);
    steps.push(
      `Store your ${answers.provider} API key in the encrypted vault: \`assistant vault set ${key}\` (type or pipe the key).`,
    );
  }
  if (isLocalServer(answers.provider)) {
    steps.push(`Keep your model server running at ${answers.server_url} with the model ${answers.model}.`);
  }
  if (files.some((f) => f.action === "skipped" && f.file !== "assistant.env")) {
    steps.push("Some files already existed and were kept; `assistant init --force` replaces them.");
  }
  steps.push("Check the setup: `assistant doctor`.", "Start the daemon: `assistant start`.");
  return steps;
}
