import { type Document, isMap, isSeq, type YAMLMap, type YAMLSeq } from "yaml";
import { writeFileAtomic } from "../util/atomicWrite.ts";
import { llmRouterSchema } from "./schemas/llmRouter.ts";
import { readYamlFile, updateYamlFile } from "./yamlDocument.ts";

// The starter files `assistant init` and `assistant doctor --fix` write, and the repair of the default route.
// They are commented YAML because people open them in an editor; the comments are the documentation.

export const STARTER_TOOLS_POLICY = `# tools_policy.yaml: what the assistant's tools may touch.
# Everything is denied unless this file allows it, and deny lists always win over allow lists.
# After editing, restart the daemon (\`assistant stop\` then \`assistant start\`).
# \`assistant config validate\` checks this file; \`assistant toolset effective\` shows the result.
# To allow anything, write "*" with quotes: in YAML a bare * starts an alias.

# Files. Path prefixes, matched on whole path segments: "/home/me/notes" allows /home/me/notes/todo.md but not
# /home/me/notes-old. "." is the daemon's working directory. An empty list allows nothing.
allowed_read_paths: []    # e.g. ["/home/me/notes", "."]
allowed_write_paths: []   # e.g. ["/home/me/notes/drafts"]

# Commands for run_command: executable names, never run through a shell. ["*"] allows every command.
allowed_commands: []      # e.g. ["git", "ls"]
blocked_commands: []      # always refused, even when allowed above
# command_timeout_secs: 60
run_command_default_cwd_workspace: false   # true: run in the task workspace when no cwd is given
# Commands run in a sandbox that hides the assistant's own files (Linux with bubblewrap; \`assistant doctor\` says).
# Without one, ["*"] allows nothing unless you accept that commands can read those files:
# unsandboxed_commands_acknowledged: true

# Web. Domains web_fetch may read (["*"] = any public host; a local or private host must be listed exactly).
allowed_web_domains: []
blocked_web_domains: []
web_search_enabled: false  # needs the vault key search_api_key (or env SEARCH_API_KEY)

# Tool profiles: named lists of tool names. With default_profile set, only that profile's tools are available.
tool_profiles: {}
# tool_profiles:
#   reader: [read_file, list_dir, search]
# default_profile: reader

# Hosts install_skill may download from (HTTPS only).
allowed_skill_install_hosts: [github.com, api.github.com, raw.githubusercontent.com, gitlab.com, codeberg.org]

# Tools that wait for your approval (review queue) before they run.
require_approval: [write_file, run_command, device_invoke, install_skill]

# Devices for device_discover and device_invoke: local_media, system, synthetic_input, usb, network, or "*".
allowed_device_interfaces: []
blocked_device_interfaces: []

# Browser automation (needs Node and the browser runner).
browser_enabled: false
browser_allowed_domains: []
browser_blocked_domains: []
browser_headless: true
browser_action_timeout_secs: 30
browser_session_timeout_secs: 300
`;

export const DEFAULT_ROUTER_YAML = `# llm_router.yaml: which model answers which kind of task.
# Edit by hand or with \`assistant config models set <CATEGORY> <PROVIDER> <MODEL>\`, then restart the daemon
# (\`assistant stop\` then \`assistant start\`). \`assistant config validate\` checks this file.
version: "1"

global:
  enable_metrics: true       # collect router metrics (\`assistant router metrics\`)
  enable_fallback: true      # try the fallback routes when the primary fails
  default_timeout_secs: 300  # per-request LLM timeout
  default_max_retries: 2     # retries of a failed call

# Optional providers. Keys live in the vault (\`assistant vault set cloud_a_api_key\`) and are referenced as
# vault://<key_name>, or by the name of an environment variable. For example:
# providers:
#   local_server:
#     base_url: http://localhost:11434
#   cloud_a:
#     api_key_ref: vault://cloud_a_api_key

task_types:
  # The default: the embedded local model (no account, no cloud call); when it is unavailable the built-in
  # core answers help and status and says how to get a model.
  conversation:
    primary:
      provider: assistant_embedded
      model: default
    fallback:
      - provider: assistant_core
        model: core
`;

const EMBEDDED = { provider: "assistant_embedded", model: "default" } as const;
const CORE = { provider: "assistant_core", model: "core" } as const;
type Target = { provider: string; model: string };

/**
 * Makes the `conversation` route of the router file the default embedded route (docs/models.md): primary
 * assistant_embedded/default and assistant_core/core as the last fallback. A different primary moves to the front
 * of the fallbacks so nothing the user configured is lost; other routes, other fallbacks and all comments stay.
 * A missing or blank file gets DEFAULT_ROUTER_YAML. Returns whether the file changed.
 *
 * With `keepCustomPrimary`, a primary the user chose (any provider but the two built-in ones) stays first and the
 * embedded model is made sure to be among the fallbacks, just before core.
 */
export function alignDefaultRoute(path: string, options: { keepCustomPrimary?: boolean } = {}): { changed: boolean } {
  const { doc, text } = readYamlFile(path);
  if (doc.contents === null) {
    const kept = text.trim() === "" ? "" : `${text.trimEnd()}\n\n`; // a comments-only file keeps its comments
    writeFileAtomic(path, kept + DEFAULT_ROUTER_YAML, 0o600);
    return { changed: true };
  }
  const { changed } = updateYamlFile(
    path,
    (d) => alignConversation(d, options.keepCustomPrimary ?? false),
    llmRouterSchema,
  );
  return { changed };
}

function alignConversation(doc: Document, keepCustomPrimary: boolean): void {
  const route = doc.getIn(["task_types", "conversation"], true);
  if (!isMap(route)) {
    doc.setIn(["task_types", "conversation"], doc.createNode({ primary: EMBEDDED, fallback: [CORE] }));
    return;
  }
  const existing = route.get("fallback", true);
  const fallback: YAMLSeq = isSeq(existing) ? existing : (doc.createNode([]) as YAMLSeq);
  if (!isSeq(existing)) route.set("fallback", fallback);
  const primary = route.get("primary", true);
  const custom =
    isMap(primary) && !isTarget(primary, EMBEDDED) && !isCore(primary) && primary.get("provider") !== EMBEDDED.provider;
  if (keepCustomPrimary && custom) {
    if (!fallback.items.some((item) => isMap(item) && isTarget(item, EMBEDDED))) {
      const coreAt = fallback.items.findIndex(isCore);
      fallback.items.splice(coreAt < 0 ? fallback.items.length : coreAt, 0, doc.createNode(EMBEDDED));
    }
  } else if (!(isMap(primary) && isTarget(primary, EMBEDDED))) {
    route.set("primary", doc.createNode(EMBEDDED));
    // The old primary node itself (with its config and comments) becomes the first fallback.
    const keep =
      isMap(primary) && !isTarget(primary, CORE) && !fallback.items.some((item) => sameTarget(item, primary));
    if (keep) fallback.items.unshift(primary);
  }
  const items = fallback.items;
  const coreCount = items.filter(isCore).length;
  const last = items.at(-1);
  if (coreCount === 1 && isMap(last) && isTarget(last, CORE)) return;
  fallback.items = items.filter((item) => !isCore(item));
  fallback.items.push(doc.createNode(CORE));
}

function isTarget(node: YAMLMap, target: Target): boolean {
  return node.get("provider") === target.provider && node.get("model") === target.model;
}

function sameTarget(item: unknown, node: YAMLMap): boolean {
  return isMap(item) && isTarget(item, { provider: String(node.get("provider")), model: String(node.get("model")) });
}

function isCore(item: unknown): boolean {
  return isMap(item) && item.get("provider") === CORE.provider;
}
