import { DEFAULT_EMBEDDED_MODEL, EMBEDDED_CATALOGUE } from "../llm/embedded/catalogueEntries.ts";
import { LOG_LEVELS } from "../log/logger.ts";
import {
  choice,
  custom,
  decimal,
  directory,
  type EnvType,
  EnvValueError,
  flag,
  hostList,
  integer,
  listenAddress,
  path,
  pattern,
  secret,
  text,
  url,
} from "./envTypes.ts";
import { ROUTE_PROVIDERS, type RouteProvider } from "./providerIds.ts";

// One registry of the environment variables the product names and the code reads, in the style of the config-file
// registry (configFiles.ts): each is declared once with its kind, default, allowed values and meaning. The
// daemon parses them all once at start (settings.ts) and refuses to start on a bad value; the domains read the
// parsed settings, `assistant config env list` and the tables of docs/configuration.md are generated from here.

/** The domain that reads a variable, with the page that explains it. */
export const ENV_GROUPS = {
  daemon: { title: "Daemon", doc: "docs/http-api.md" },
  vault: { title: "Vault", doc: "docs/security.md" },
  models: { title: "Models", doc: "docs/models.md" },
  agent: { title: "Agent", doc: "docs/agent.md" },
  tools: { title: "Tools", doc: "docs/tools.md" },
  skills: { title: "Skills", doc: "docs/skills.md" },
  plugins: { title: "Plugins", doc: "docs/plugins.md" },
  memory: { title: "Memory", doc: "docs/memory.md" },
  scheduler: { title: "Scheduler", doc: "docs/scheduler.md" },
  mission: { title: "Mission", doc: "docs/mission.md" },
  cli: { title: "Command line", doc: "docs/cli.md" },
} as const;
export type EnvGroup = keyof typeof ENV_GROUPS;

export interface EnvVariableSpec<T = unknown, D extends T | undefined = T | undefined> {
  name: string;
  group: EnvGroup;
  type: EnvType<T>;
  /** The value when the variable is unset or blank; undefined when there is none. */
  default: D;
  /** The default in words when it is not a fixed value (computed, or from another file). */
  defaultText?: string;
  meaning: string;
  /** Set for variables its owner reads itself instead of the parsed settings, saying who and why. */
  readBy?: string;
}

// The default is checked against the kind, never inferred from it, so `default: "info"` keeps the kind's type.
function variable<T>(entry: EnvVariableSpec<T, NoInfer<T>>): EnvVariableSpec<T, T>;
function variable<T>(entry: EnvVariableSpec<T, undefined>): EnvVariableSpec<T, undefined>;
function variable<T>(entry: EnvVariableSpec<T>): EnvVariableSpec<T> {
  return entry;
}

/** A variable its owner reads itself (a secret, the data directory): documented here, not in the settings. */
function readElsewhere<T>(entry: EnvVariableSpec<T, undefined> & { readBy: string }) {
  return entry;
}

/** What ASSISTANT_MEMORY_EMBEDDINGS asks for (memory/embedder.ts resolves it). */
export type EmbedderChoice =
  | { kind: "auto" }
  | { kind: "off" }
  | { kind: "named"; provider: RouteProvider; model: string };

const EMBEDDING_PROVIDERS = ROUTE_PROVIDERS.filter((p) => p !== "assistant_core");

const embedderChoice = custom<EmbedderChoice>(
  "choice",
  `auto, off or <provider>:<model> with a provider of ${EMBEDDING_PROVIDERS.join(", ")}`,
  (value) => {
    const lower = value.toLowerCase();
    if (lower === "auto") return { kind: "auto" };
    if (lower === "off" || lower === "none") return { kind: "off" };
    const at = value.indexOf(":");
    const provider = value.slice(0, at) as RouteProvider;
    const model = value.slice(at + 1).trim();
    if (at <= 0 || !model || !(EMBEDDING_PROVIDERS as string[]).includes(provider)) throw new EnvValueError();
    return { kind: "named", provider, model };
  },
  (choice) => (choice.kind === "named" ? `${choice.provider}:${choice.model}` : choice.kind),
);

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** A download mirror: https, plain http only on a loopback host (the tests' server), never credentials. */
const mirrorUrl = custom(
  "url",
  "an https URL without credentials (http only on a loopback host)",
  (value) => {
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      throw new EnvValueError("this is not a URL");
    }
    const loopback = LOOPBACK_HOSTS.has(parsed.hostname) || /^127\.\d+\.\d+\.\d+$/.test(parsed.hostname);
    if (parsed.protocol !== "https:" && !(parsed.protocol === "http:" && loopback))
      throw new EnvValueError("plain http is accepted only on a loopback host");
    if (parsed.username || parsed.password) throw new EnvValueError("it contains credentials");
    return parsed.href;
  },
  String,
  false,
);

const seconds = decimal({ above: 0, max: 86_400, unit: "seconds" });
const tokens = integer(1, 2_147_483_647, "tokens");

export const ENV_VARIABLES = {
  // ---- daemon ----
  dataDir: readElsewhere({
    name: "ASSISTANT_DATA_DIR",
    group: "daemon",
    type: path(),
    default: undefined,
    defaultText: "`~/assistant` (`%USERPROFILE%\\assistant` on Windows)",
    meaning: "the data directory: config files, vault, skills, database",
    readBy: "config/paths.ts, before the env files are read: set it in the environment, never in assistant.env",
  }),
  port: variable({
    name: "ASSISTANT_PORT",
    group: "daemon",
    type: integer(0, 65_535),
    default: 3876,
    meaning: "HTTP port; 0 picks a free port at start",
  }),
  bind: variable({
    name: "ASSISTANT_BIND",
    group: "daemon",
    type: listenAddress(),
    default: "127.0.0.1",
    meaning: "listen address; `0.0.0.0` exposes the daemon to your network (the token is still required)",
  }),
  logLevel: variable({
    name: "ASSISTANT_LOG",
    group: "daemon",
    type: choice(LOG_LEVELS),
    default: "info",
    meaning: "log level of logs/daemon.log",
  }),
  logLlmResponse: variable({
    name: "ASSISTANT_LOG_LLM_RESPONSE",
    group: "daemon",
    type: flag(),
    default: false,
    meaning: "`1`: log the full text of each model answer at info level (known secrets redacted)",
  }),
  maxBodyBytes: variable({
    name: "ASSISTANT_MAX_BODY_BYTES",
    group: "daemon",
    type: integer(1024, 1024 * 1024 * 1024),
    default: 1024 * 1024,
    meaning: "largest request body",
  }),
  allowedHosts: variable({
    name: "ASSISTANT_ALLOWED_HOSTS",
    group: "daemon",
    type: hostList(),
    default: [],
    meaning: "extra host names the daemon answers to (comma-separated), e.g. behind a reverse proxy",
  }),
  studioPort: variable({
    name: "ASSISTANT_STUDIO_PORT",
    group: "daemon",
    type: integer(1, 65_535),
    default: 5178,
    meaning: "the Studio's port, whose Origin the daemon accepts",
  }),
  specDir: variable({
    name: "ASSISTANT_SPEC_DIR",
    group: "daemon",
    type: directory(),
    default: undefined,
    meaning: "another folder of Markdown docs for the web UI's Doc tab, listed after `docs/` under `@spec/`",
  }),
  webDir: variable({
    name: "ASSISTANT_WEB_DIR",
    group: "daemon",
    type: path(),
    default: undefined,
    defaultText: "the build of the web UI package (`packages/web/dist`)",
    meaning: "folder of the built web UI the daemon serves at `/`",
  }),
  validateResponses: variable({
    name: "ASSISTANT_VALIDATE_RESPONSES",
    group: "daemon",
    type: flag(),
    default: false,
    meaning: "tests only: `1` checks every answer against what its route declares (a mismatch is a 500)",
  }),
  supervisorPid: variable({
    name: "ASSISTANT_SUPERVISOR_PID",
    group: "daemon",
    type: integer(1),
    default: undefined,
    meaning: "set by `assistant start` for the daemon it supervises (not for you to set)",
  }),
  // ---- vault ----
  vaultMasterKey: readElsewhere({
    name: "ASSISTANT_VAULT_MASTER_KEY",
    group: "vault",
    type: secret(),
    default: undefined,
    meaning: "master key of the vault (else the OS keyring or `vault.key`); set it in the environment, never in a file",
    readBy: "vault/keySource.ts: a secret is never copied into the settings",
  }),
  vaultKeyring: variable({
    name: "ASSISTANT_VAULT_KEYRING",
    group: "vault",
    type: flag(),
    default: undefined,
    defaultText: "1 on macOS and Windows, else 0",
    meaning: "`1`: a new vault keeps its key in the OS keyring; `0`: in `vault.key`",
  }),
  // ---- models ----
  llmTimeoutSecs: variable({
    name: "ASSISTANT_LLM_TIMEOUT_SECS",
    group: "models",
    type: seconds,
    default: undefined,
    defaultText: "`global.default_timeout_secs` of llm_router.yaml (300)",
    meaning: "whole model call",
  }),
  llmFirstChunkSecs: variable({
    name: "ASSISTANT_LLM_FIRST_CHUNK_SECS",
    group: "models",
    type: seconds,
    default: undefined,
    defaultText: "min(300, the whole call)",
    meaning: "wait for the first chunk (raise both on a slow first load of the embedded model)",
  }),
  llmStreamIdleSecs: variable({
    name: "ASSISTANT_LLM_STREAM_IDLE_SECS",
    group: "models",
    type: seconds,
    default: 60,
    meaning: "longest gap between chunks",
  }),
  maxResponseTokens: variable({
    name: "ASSISTANT_MAX_RESPONSE_TOKENS",
    group: "models",
    type: tokens,
    default: 4096,
    meaning: "answer length of chat completions",
  }),
  systemTaskMaxTokens: variable({
    name: "ASSISTANT_SYSTEM_TASK_MAX_TOKENS",
    group: "models",
    type: tokens,
    default: 4096,
    meaning: "answer length of system tasks (raise it for thinking models)",
  }),
  degradedMode: variable({
    name: "ASSISTANT_DEGRADED_MODE",
    group: "models",
    type: flag(),
    default: false,
    meaning: "`1`: local providers only (local server and embedded model)",
  }),
  maxTokensPerSession: variable({
    name: "ASSISTANT_MAX_TOKENS_PER_SESSION",
    group: "models",
    type: integer(1),
    default: undefined,
    meaning: "token budget of a chat session",
  }),
  maxCostPerSessionUsd: variable({
    name: "ASSISTANT_MAX_COST_PER_SESSION_USD",
    group: "models",
    type: decimal({ above: 0 }),
    default: undefined,
    meaning: "estimated-cost budget of a chat session, in US dollars",
  }),
  embeddedModel: variable({
    name: "ASSISTANT_EMBEDDED_MODEL",
    group: "models",
    type: choice(EMBEDDED_CATALOGUE.map((entry) => entry.id)),
    default: DEFAULT_EMBEDDED_MODEL,
    meaning: "catalogue id of the embedded model",
  }),
  embeddedModelPath: variable({
    name: "ASSISTANT_EMBEDDED_MODEL_PATH",
    group: "models",
    type: path(),
    default: undefined,
    meaning: "any local GGUF file, used as is instead of the catalogue model (offline use)",
  }),
  embeddedModelUrl: variable({
    name: "ASSISTANT_EMBEDDED_MODEL_URL",
    group: "models",
    type: mirrorUrl,
    default: undefined,
    meaning: "download the catalogue model from this mirror instead",
  }),
  embeddedModelSha256: variable({
    name: "ASSISTANT_EMBEDDED_MODEL_SHA256",
    group: "models",
    type: pattern("64 hexadecimal characters", /^[0-9a-f]{64}$/i, (value) => value.toLowerCase()),
    default: undefined,
    meaning: "sha256 of the mirror's file (the catalogue size then no longer applies)",
  }),
  embeddedModelSize: variable({
    name: "ASSISTANT_EMBEDDED_MODEL_SIZE",
    group: "models",
    type: integer(1, Number.MAX_SAFE_INTEGER, "bytes"),
    default: undefined,
    meaning: "size of the mirror's file",
  }),
  embeddedThreads: variable({
    name: "ASSISTANT_EMBEDDED_THREADS",
    group: "models",
    type: integer(1),
    default: undefined,
    defaultText: "measured at the first load of a model file",
    meaning: "llama.cpp threads (skips the automatic calibration)",
  }),
  embeddedContext: variable({
    name: "ASSISTANT_EMBEDDED_CONTEXT",
    group: "models",
    type: integer(1, Number.MAX_SAFE_INTEGER, "tokens"),
    default: undefined,
    defaultText: "at most 8192",
    meaning: "context size of the embedded model",
  }),
  embeddedGpu: variable({
    name: "ASSISTANT_EMBEDDED_GPU",
    group: "models",
    type: flag(),
    default: true,
    meaning: "`0`: CPU only even when a GPU is found",
  }),
  modelCacheHome: variable({
    name: "MODEL_CACHE_HOME",
    group: "models",
    type: path(),
    default: undefined,
    defaultText: "`<data dir>/models`",
    meaning: "where downloaded weights go",
  }),
  localServerHost: variable({
    name: "LOCAL_SERVER_HOST",
    group: "models",
    type: url(),
    default: undefined,
    defaultText: "`http://localhost:11434`",
    meaning: "the local model server when llm_router.yaml names none",
  }),
  cloudAApiKey: readElsewhere({
    name: "CLOUD_A_API_KEY",
    group: "models",
    type: secret(),
    default: undefined,
    meaning: "cloud_a key when the router file has no `api_key_ref` (the vault is better)",
    readBy: "llm/ key lookup: a router file's `api_key_ref` may name any variable",
  }),
  cloudBApiKey: readElsewhere({
    name: "CLOUD_B_API_KEY",
    group: "models",
    type: secret(),
    default: undefined,
    meaning: "cloud_b key when the router file has no `api_key_ref` (the vault is better)",
    readBy: "llm/ key lookup: a router file's `api_key_ref` may name any variable",
  }),
  cloudBSiteUrl: variable({
    name: "CLOUD_B_SITE_URL",
    group: "models",
    type: text(),
    default: undefined,
    meaning: "OpenRouter attribution header when the router file has no `site_url`",
  }),
  cloudBAppTitle: variable({
    name: "CLOUD_B_APP_TITLE",
    group: "models",
    type: text(),
    default: undefined,
    meaning: "OpenRouter attribution header when the router file has no `app_title`",
  }),
  // ---- agent ----
  maxToolRounds: variable({
    name: "ASSISTANT_MAX_TOOL_ROUNDS",
    group: "agent",
    type: integer(1, 100),
    default: 10,
    meaning: "model turns of one work unit of a task",
  }),
  maxContextTokens: variable({
    name: "ASSISTANT_MAX_CONTEXT_TOKENS",
    group: "agent",
    type: integer(256, 2_147_483_647, "tokens"),
    default: 8192,
    meaning: "how much recent session history goes with a message before older messages are summarised",
  }),
  maxConcurrentDelegations: variable({
    name: "ASSISTANT_MAX_CONCURRENT_DELEGATIONS",
    group: "agent",
    type: integer(1, 1000),
    default: 15,
    meaning: "sub-tasks one orchestrated request may delegate",
  }),
  maxParallelSubtasks: variable({
    name: "ASSISTANT_MAX_PARALLEL_SUBTASKS",
    group: "agent",
    type: integer(1, 1000),
    default: 4,
    meaning: "sub-tasks running at once",
  }),
  agentDebug: variable({
    name: "ASSISTANT_AGENT_DEBUG",
    group: "agent",
    type: flag(),
    default: false,
    meaning:
      "`1`: log each model request's size, each tool decision and the timings at info level (never message text or arguments)",
  }),
  // ---- tools ----
  approvalTimeoutSecs: variable({
    name: "ASSISTANT_APPROVAL_TIMEOUT_SECS",
    group: "tools",
    type: integer(1, 30 * 86_400, "seconds"),
    default: 900,
    meaning: "how long a review-queue item waits before it expires",
  }),
  toolsJournalPath: variable({
    name: "ASSISTANT_TOOLS_JOURNAL_PATH",
    group: "tools",
    type: path(),
    default: undefined,
    defaultText: "`<data dir>/logs/tools_journal.jsonl`",
    meaning: "append-only journal of file writes by tools (relative to the daemon's working directory)",
  }),
  messageWebhookUrl: variable({
    name: "ASSISTANT_MESSAGE_WEBHOOK_URL",
    group: "tools",
    type: url(),
    default: undefined,
    meaning: "where the `message` tool posts",
  }),
  webSearchUrl: variable({
    name: "ASSISTANT_WEB_SEARCH_URL",
    group: "tools",
    type: url(),
    default: "https://api.search.brave.com/res/v1/web/search",
    meaning: "the endpoint `web_search` asks (Brave Search API, or another speaking the same protocol)",
  }),
  searchApiKey: readElsewhere({
    name: "SEARCH_API_KEY",
    group: "tools",
    type: secret(),
    default: undefined,
    meaning: "key for `web_search` when the vault has no `search_api_key`",
    readBy: "tools/builtin/webSearch.ts after the vault: a secret is never copied into the settings",
  }),
  commandSandbox: variable({
    name: "ASSISTANT_COMMAND_SANDBOX",
    group: "tools",
    type: choice(["auto", "off"]),
    default: "auto",
    meaning:
      "`auto`: run commands in the bubblewrap sandbox when it works here; `off`: without it, as where none is available",
  }),
  // ---- skills and plugins ----
  githubEnterpriseHosts: variable({
    name: "ASSISTANT_GITHUB_ENTERPRISE_HOSTS",
    group: "skills",
    type: hostList(),
    default: [],
    meaning:
      "GitHub Enterprise hosts whose folder URLs install a whole skill through `https://<host>/api/v3`; the host must also be in `allowed_skill_install_hosts`",
  }),
  pluginTimeoutMs: variable({
    name: "ASSISTANT_PLUGIN_TIMEOUT_MS",
    group: "plugins",
    type: integer(1, Number.MAX_SAFE_INTEGER, "milliseconds"),
    default: 5000,
    meaning: "wall-clock limit of one plugin call; a manifest's `limits.timeout_ms` can only lower it",
  }),
  pluginFuel: variable({
    name: "ASSISTANT_PLUGIN_FUEL",
    group: "plugins",
    type: integer(1),
    default: 10_000_000_000,
    meaning:
      "instruction budget of one plugin call (each WebAssembly instruction counts one); a manifest's `limits.fuel` can only lower it",
  }),
  pluginMaxMemoryMb: variable({
    name: "ASSISTANT_PLUGIN_MAX_MEMORY_MB",
    group: "plugins",
    type: integer(1),
    default: 64,
    meaning: "memory cap of a plugin in MiB; a manifest's `limits.memory_mb` can only lower it",
  }),
  pluginReputationThreshold: variable({
    name: "ASSISTANT_PLUGIN_REPUTATION_THRESHOLD",
    group: "plugins",
    type: decimal({ min: 0, max: 100 }),
    default: 50,
    meaning: "a plugin whose score falls under it is disabled until its reputation is reset",
  }),
  // ---- memory ----
  memoryEmbeddings: variable({
    name: "ASSISTANT_MEMORY_EMBEDDINGS",
    group: "memory",
    type: embedderChoice,
    default: { kind: "auto" },
    meaning:
      "which model embeds memories: `auto` (the embedded model when its file is on disk, else text search only), `off`, or a provider and model; a cloud embedder receives the memory text and is never used with `ASSISTANT_DEGRADED_MODE=1`",
  }),
  memoryLearning: variable({
    name: "ASSISTANT_MEMORY_LEARNING",
    group: "memory",
    type: flag(),
    default: true,
    meaning:
      "`0` starts with learning paused; once learning is switched through `POST /api/memory/second-brain/settings`, that stored setting wins",
  }),
  memoryLearnIdleSecs: variable({
    name: "ASSISTANT_MEMORY_LEARN_IDLE_SECS",
    group: "memory",
    type: seconds,
    default: 20,
    meaning:
      "learning reads a conversation once it has been quiet this long (or after 5 turns that may teach something, or before compaction), in one model call for all its new turns",
  }),
  memoryPromptTokens: variable({
    name: "ASSISTANT_MEMORY_PROMPT_TOKENS",
    group: "memory",
    type: integer(1, Number.MAX_SAFE_INTEGER, "tokens"),
    default: 400,
    meaning: "token budget of the memories added to the prompt",
  }),
  graphExpand: variable({
    name: "ASSISTANT_GRAPH_EXPAND",
    group: "memory",
    type: flag(),
    default: false,
    meaning: "`1`: memory search also returns the memories linked to the best hits (one hop)",
  }),
  // ---- scheduler and mission ----
  scheduleMinIntervalSecs: variable({
    name: "ASSISTANT_SCHEDULE_MIN_INTERVAL_SECS",
    group: "scheduler",
    type: integer(1, 31_536_000, "seconds"),
    default: 60,
    meaning: "the shortest `interval_secs` a schedule may have",
  }),
  missionInterimReportSecs: variable({
    name: "ASSISTANT_MISSION_INTERIM_REPORT_SECS",
    group: "mission",
    type: decimal({ above: 0, unit: "seconds" }),
    default: 300,
    meaning: "a mission cycle still running after this long gets an interim report, rewritten every such period",
  }),
  // ---- command line ----
  lang: variable({
    name: "ASSISTANT_LANG",
    group: "cli",
    type: text(),
    default: undefined,
    defaultText: "`LC_ALL`, else `LANG`",
    meaning: "language `assistant init` proposes: a value starting with `fr` is French, anything else English",
  }),
  visual: readElsewhere({
    name: "VISUAL",
    group: "cli",
    type: text(),
    default: undefined,
    meaning: "the editor `assistant mission edit` opens (with its arguments, through the shell)",
    readBy: "cli/mission.ts: read when the command runs",
  }),
  editor: readElsewhere({
    name: "EDITOR",
    group: "cli",
    type: text(),
    default: undefined,
    defaultText: "`vi`",
    meaning: "the editor `assistant mission edit` opens when `VISUAL` is not set",
    readBy: "cli/mission.ts: read when the command runs",
  }),
};

export type SettingKey = keyof typeof ENV_VARIABLES;
export const SETTING_KEYS = Object.keys(ENV_VARIABLES) as SettingKey[];

/**
 * Variables the product names for features this version does not have yet: documented so the names are
 * taken, never read (a value set for them changes nothing). A feature that reads one moves it to ENV_VARIABLES.
 */
export const PLANNED_ENV_VARIABLES: ReadonlyArray<{ name: string; feature: string; meaning: string }> = [
  { name: "ASSISTANT_APP_BASE_URL", feature: "update check", meaning: "site root used for the update check" },
  { name: "ASSISTANT_AUTO_UPDATE_CHECK", feature: "update check", meaning: "`1`: check for an update at start" },
  { name: "ASSISTANT_BROWSER_RUNNER", feature: "browser", meaning: "path of a Chromium or Chrome executable" },
  {
    name: "ASSISTANT_BROWSER_AUTO_INSTALL",
    feature: "browser",
    meaning: "`0`: no automatic runner install or browser download",
  },
  { name: "ASSISTANT_CHANNEL_A_ENABLED", feature: "channels", meaning: "`1`: channel_a on" },
  { name: "ASSISTANT_CHANNEL_B_ENABLED", feature: "channels", meaning: "`1`: channel_b on" },
  { name: "ASSISTANT_CHANNEL_C_ENABLED", feature: "channels", meaning: "`1`: channel_c on" },
  { name: "ASSISTANT_CHANNEL_D_ENABLED", feature: "channels", meaning: "`1`: channel_d on" },
  {
    name: "ASSISTANT_CHANNEL_A_NOTIFY_CHAT_ID",
    feature: "channels",
    meaning: "chat id for the startup notification of channel_a",
  },
  { name: "ASSISTANT_CHANNEL_A_API_ROOT", feature: "channels", meaning: "Bot API root of channel_a" },
  {
    name: "ASSISTANT_CHANNEL_A_PAIRING_TTL_SECS",
    feature: "channels",
    meaning: "lifetime of a channel_a pairing code (1 h)",
  },
  {
    name: "ASSISTANT_CHANNEL_B_RESPONSE_HOSTS",
    feature: "channels",
    meaning: "hosts channel_b may answer to (`hooks.slack.com`)",
  },
  { name: "ASSISTANT_CHANNEL_C_API_ROOT", feature: "channels", meaning: "API root of channel_c" },
  { name: "ASSISTANT_CHANNEL_C_ALLOWED_USERS", feature: "channels", meaning: "user ids channel_c answers" },
  { name: "ASSISTANT_CHANNEL_D_HOMESERVER", feature: "channels", meaning: "Matrix homeserver of channel_d" },
  {
    name: "ASSISTANT_CHANNEL_D_ALLOWED_USERS",
    feature: "channels",
    meaning: "users channel_d answers (empty: nobody)",
  },
  { name: "ASSISTANT_CLUSTER_ENABLED", feature: "cluster", meaning: "`1`: multi-node mode with a message bus" },
  { name: "ASSISTANT_NODE_ID", feature: "cluster", meaning: "node id (the host name)" },
  { name: "ASSISTANT_BUS_URL", feature: "cluster", meaning: "message bus (`nats://127.0.0.1:4222`)" },
  { name: "ASSISTANT_BUS_TLS_CA", feature: "cluster", meaning: "CA file for the bus's mTLS" },
  { name: "ASSISTANT_BUS_TLS_CLIENT_CERT", feature: "cluster", meaning: "client certificate file for the bus" },
  { name: "ASSISTANT_BUS_TLS_CLIENT_KEY", feature: "cluster", meaning: "client key file for the bus" },
  { name: "ASSISTANT_HOME_HUB_URL", feature: "devices", meaning: "Home Assistant REST API (else discovered)" },
  {
    name: "ASSISTANT_MODELS_DIR",
    feature: "assistant services",
    meaning: "folder with the compose file `assistant services` uses",
  },
  {
    name: "ASSISTANT_STUDIO_MAX_PARALLEL_OPS",
    feature: "Studio",
    meaning: "bound on the Studio's operations in flight",
  },
  { name: "STUDIO_DAEMON_URL", feature: "Studio", meaning: "daemon URL the Studio proxies to (port 3876)" },
  { name: "ASSISTANT_TERMINAL_ENABLED", feature: "terminal sessions", meaning: "`1`: terminal sessions on" },
  { name: "ASSISTANT_TERMINAL_MAX_SESSIONS", feature: "terminal sessions", meaning: "sessions at once (4)" },
  { name: "ASSISTANT_TERMINAL_IDLE_SECS", feature: "terminal sessions", meaning: "idle timeout (1800)" },
  {
    name: "ASSISTANT_WEBHOOK_DIRECT_BODY_JSON",
    feature: "webhooks",
    meaning: "response body of the direct webhook",
  },
  { name: "ASSISTANT_WEBHOOK_IDEM_SQLITE", feature: "webhooks", meaning: "shared idempotency store for webhooks" },
  { name: "ASSISTANT_WEBHOOK_RATE_LIMIT", feature: "webhooks", meaning: "webhook calls per minute (60)" },
];
