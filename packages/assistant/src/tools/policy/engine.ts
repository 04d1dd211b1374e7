import { isAbsolute } from "node:path";
import { DEVICE_INTERFACES, type ToolsPolicy } from "../../config/schemas/toolsPolicy.ts";
import { type DaemonFiles, PROTECTED_RULE, SOURCE_PROTECTED } from "./daemonFiles.ts";
import { type LauncherPolicy, launcherPolicy, launchRefusal } from "./launchers.ts";
import { CASE_INSENSITIVE_PLATFORM, resolvePolicyPath, withinPrepared } from "./paths.ts";
import {
  type ApprovalMode,
  type Decision,
  type PersistentDecision,
  SOURCE_DECISIONS,
  SOURCE_DEFAULT,
  SOURCE_MODE,
  type ToolRequest,
  type ToolRequestKind,
} from "./types.ts";
import { allowedRule, blockedRule, compileHostList, type HostList, isIpHost, normaliseHost, urlHost } from "./web.ts";

// The permission chain (docs/tools.md#what-every-call-goes-through). Ordered checks, the first deny wins, nothing
// unmatched allows:
//   0. the built-in `protected: daemon data` rule   -> deny (daemonFiles.ts; nothing lifts it)
//   1. no policy file (missing or empty)            -> deny
//   2. default_profile set and the tool not in it    -> deny
//   3. deny lists (commands, web, devices, browser)  -> deny
//   4. persistent deny decisions for tool + scope    -> deny
//   5. allow lists for the resource                  -> deny naming what is missing
//   6. require_approval lists the tool               -> allow by a persistent allow decision, by mode
//                                                      allow_all, else ask
//   7. allow, naming the allow rule.
// Persistent decisions never widen the policy file: an allow decision only skips the approval step.
// Lists are compiled once (sets, prefixes folded and longest first), so `decide` does no I/O and little
// allocation; paths and executables must be resolved beforehand (paths.ts, commands.ts).

export interface PolicyEngineOptions {
  /** The parsed tools_policy.yaml, or null when the file is missing or empty (deny everything). */
  policy: ToolsPolicy | null;
  /** Path of tools_policy.yaml, named as the source of its rules. */
  policyFile: string;
  /** The daemon's working directory: what `.` and relative entries mean. */
  cwd: string;
  decisions?: readonly PersistentDecision[];
  mode?: ApprovalMode;
  /** Path comparison ignores case; default true on win32 and darwin. */
  caseInsensitive?: boolean;
  /** Why there is no policy, when `policy` is null for another reason than a missing file (an invalid one). */
  missingReason?: string;
  /** The daemon's own files, refused to every read and write whatever the rest says. */
  daemonFiles?: DaemonFiles;
  /**
   * Whether run_command children run in a sandbox that hides the daemon's files. Without one, a command allowed
   * only by `allowed_commands: ['*']` needs `unsandboxed_commands_acknowledged: true`. Default true.
   */
  commandSandbox?: boolean;
}

export interface PolicyEngine {
  readonly mode: ApprovalMode;
  decide(request: ToolRequest): Decision;
  /** The same policy with another set of persistent decisions. */
  withDecisions(decisions: readonly PersistentDecision[]): PolicyEngine;
  withMode(mode: ApprovalMode): PolicyEngine;
}

interface PathRule {
  entry: string;
  prefix: string;
}

interface CompiledPolicy {
  file: string;
  fold: boolean;
  profileName: string | null;
  profile: ReadonlySet<string> | null;
  readPaths: PathRule[];
  writePaths: PathRule[];
  allowAllCommands: boolean;
  /** Why `allowed_commands: ['*']` allows nothing: no command sandbox and no acknowledgement. */
  wildcardRefusal: string | null;
  allowedCommands: ReadonlySet<string>;
  blockedCommands: ReadonlySet<string>;
  /** Runners, shells and interpreters that could run a blocked command (launchers.ts); null: nothing blocked. */
  launchers: LauncherPolicy | null;
  webAllowed: HostList;
  webBlocked: HostList;
  webSearchEnabled: boolean;
  skillHosts: HostList;
  requireApproval: ReadonlySet<string>;
  devicesAllowed: ReadonlySet<string>;
  devicesBlocked: ReadonlySet<string>;
  browserEnabled: boolean;
  browserAllowed: HostList;
  browserBlocked: HostList;
}

interface CompiledDecision {
  id: string;
  scope: string;
  any: boolean;
  path: string;
  host: string | null;
}

interface CompiledDecisions {
  deny: ReadonlyMap<string, CompiledDecision[]>;
  allow: ReadonlyMap<string, CompiledDecision[]>;
}

const DEVICE_NAMES: ReadonlySet<string> = new Set(DEVICE_INTERFACES);
const MISSING: Decision = {
  effect: "deny",
  rule: "default: tools_policy.yaml is missing (deny by default)",
  source: SOURCE_DEFAULT,
};

export function createPolicyEngine(options: PolicyEngineOptions): PolicyEngine {
  const fold = options.caseInsensitive ?? CASE_INSENSITIVE_PLATFORM;
  const compiled = options.policy
    ? compilePolicy(options.policy, options.policyFile, options.cwd, fold, options.commandSandbox ?? true)
    : null;
  return build(compiled, compileDecisions(options.decisions ?? [], options.cwd, fold), options, fold);
}

function build(
  policy: CompiledPolicy | null,
  decisions: CompiledDecisions,
  options: PolicyEngineOptions,
  fold: boolean,
): PolicyEngine {
  const mode = options.mode ?? "ask_me";
  const files = options.daemonFiles;
  return {
    mode,
    decide: (request) => {
      if (files && (request.kind === "read" || request.kind === "write")) {
        const refused = files.refusal(request.kind, request.path);
        if (refused !== null) return deny(`${PROTECTED_RULE}: ${refused}`, SOURCE_PROTECTED);
      }
      return policy === null && options.missingReason
        ? { effect: "deny", rule: `default: ${options.missingReason} (deny by default)`, source: SOURCE_DEFAULT }
        : decide(policy, decisions, mode, request);
    },
    withDecisions: (list) => build(policy, compileDecisions(list, options.cwd, fold), options, fold),
    withMode: (next) => build(policy, decisions, { ...options, mode: next }, fold),
  };
}

function compilePaths(entries: readonly string[], cwd: string, fold: boolean): PathRule[] {
  return entries
    .map((entry) => {
      const resolved = resolvePolicyPath(entry, cwd);
      return { entry, prefix: fold ? resolved.toLowerCase() : resolved };
    })
    .sort((a, b) => b.prefix.length - a.prefix.length); // the most specific entry names the rule
}

function compilePolicy(
  policy: ToolsPolicy,
  file: string,
  cwd: string,
  fold: boolean,
  sandboxed: boolean,
): CompiledPolicy {
  const profileName = policy.default_profile ?? null;
  return {
    file,
    fold,
    profileName,
    profile: profileName === null ? null : new Set(policy.tool_profiles[profileName] ?? []),
    readPaths: compilePaths(policy.allowed_read_paths, cwd, fold),
    writePaths: compilePaths(policy.allowed_write_paths, cwd, fold),
    allowAllCommands: policy.allowed_commands.includes("*"),
    wildcardRefusal:
      sandboxed || policy.unsandboxed_commands_acknowledged
        ? null
        : `${PROTECTED_RULE}: no command sandbox here, so commands can read the daemon's files; name the commands in allowed_commands, or set unsandboxed_commands_acknowledged: true to allow * anyway`,
    allowedCommands: new Set(policy.allowed_commands),
    blockedCommands: new Set(policy.blocked_commands),
    launchers: launcherPolicy(policy.allowed_commands, policy.blocked_commands),
    webAllowed: compileHostList("allowed_web_domains", policy.allowed_web_domains),
    webBlocked: compileHostList("blocked_web_domains", policy.blocked_web_domains),
    webSearchEnabled: policy.web_search_enabled,
    skillHosts: compileHostList("allowed_skill_install_hosts", policy.allowed_skill_install_hosts),
    requireApproval: new Set(policy.require_approval),
    devicesAllowed: new Set(policy.allowed_device_interfaces),
    devicesBlocked: new Set(policy.blocked_device_interfaces),
    browserEnabled: policy.browser_enabled,
    browserAllowed: compileHostList("browser_allowed_domains", policy.browser_allowed_domains),
    browserBlocked: compileHostList("browser_blocked_domains", policy.browser_blocked_domains),
  };
}

function compileDecisions(list: readonly PersistentDecision[], cwd: string, fold: boolean): CompiledDecisions {
  const deny = new Map<string, CompiledDecision[]>();
  const allow = new Map<string, CompiledDecision[]>();
  for (const d of list) {
    const scope = d.scope.trim();
    if (scope.length === 0 || scope.includes("\0")) continue; // an empty scope matches nothing
    const path = resolvePolicyPath(scope, cwd);
    const compiled: CompiledDecision = {
      id: d.id,
      scope,
      any: scope === "*",
      path: fold ? path.toLowerCase() : path,
      host: normaliseHost(scope),
    };
    const target = d.effect === "deny" ? deny : allow;
    const forTool = target.get(d.tool);
    if (forTool) forTool.push(compiled);
    else target.set(d.tool, [compiled]);
  }
  return { deny, allow };
}

function hostWithin(host: string, scope: string): boolean {
  if (host === scope) return true;
  return host.length > scope.length && host.endsWith(scope) && host.charCodeAt(host.length - scope.length - 1) === 46;
}

/** Whether a decision's scope covers the request's subject (folded path, executable, host, interface, tool). */
function scopeMatches(d: CompiledDecision, kind: ToolRequestKind, subject: string): boolean {
  if (d.any) return true;
  switch (kind) {
    case "read":
    case "write":
      return withinPrepared(subject, d.path);
    case "web":
    case "skill_install":
    case "browser":
      return d.host !== null && (d.host === subject || (!isIpHost(d.host) && hostWithin(subject, d.host)));
    default:
      return d.scope === subject;
  }
}

function findDecision(
  map: ReadonlyMap<string, CompiledDecision[]>,
  tool: string,
  kind: ToolRequestKind,
  subject: string,
): CompiledDecision | null {
  const list = map.get(tool);
  if (!list) return null;
  for (const d of list) if (scopeMatches(d, kind, subject)) return d;
  return null;
}

function deny(rule: string, source: string): Decision {
  return { effect: "deny", rule, source };
}

function decide(
  c: CompiledPolicy | null,
  decisions: CompiledDecisions,
  mode: ApprovalMode,
  request: ToolRequest,
): Decision {
  // 1. no file
  if (c === null) return MISSING;
  const tool = request.tool;
  // 2. profile
  if (c.profile !== null && !c.profile.has(tool)) {
    return deny(`default_profile: profile ${c.profileName} does not include ${tool}`, c.file);
  }
  // 3 and 5 need the request's subject; 4 sits between them.
  let subject: string;
  let allowRule: string;
  switch (request.kind) {
    case "read":
    case "write": {
      const path = request.path;
      if (!isAbsolute(path) || path.includes("\0"))
        return deny(`default: path ${path} is not resolved`, SOURCE_DEFAULT);
      subject = c.fold ? path.toLowerCase() : path;
      const denied = persistentDeny(decisions, tool, request.kind, subject);
      if (denied) return denied;
      const rules = request.kind === "read" ? c.readPaths : c.writePaths;
      const key = request.kind === "read" ? "allowed_read_paths" : "allowed_write_paths";
      let hit: PathRule | null = null;
      for (const rule of rules) {
        if (withinPrepared(subject, rule.prefix)) {
          hit = rule;
          break;
        }
      }
      if (hit === null) return deny(`${key} does not cover ${path}`, c.file);
      allowRule = `${key}: ${hit.entry}`;
      break;
    }
    case "command": {
      const name = request.executable;
      if (name.length === 0) return deny("default: empty command", SOURCE_DEFAULT);
      if (name.includes("/") || name.includes("\\") || name.includes("\0")) {
        return deny(`default: executable ${name} is not resolved to a name`, SOURCE_DEFAULT);
      }
      if (c.blockedCommands.has(name)) return deny(`blocked_commands: ${name}`, c.file);
      if (c.launchers !== null) {
        const launched = launchRefusal(name, request.argv, c.launchers);
        if (launched !== null) return deny(launched, c.file);
      }
      subject = name;
      const denied = persistentDeny(decisions, tool, "command", subject);
      if (denied) return denied;
      if (c.allowedCommands.has(name)) allowRule = `allowed_commands: ${name}`;
      else if (c.allowAllCommands) {
        if (c.wildcardRefusal !== null) return deny(c.wildcardRefusal, c.file);
        allowRule = "allowed_commands: *";
      } else return deny(`allowed_commands does not list ${name}`, c.file);
      break;
    }
    case "web": {
      const host = urlHost(request.url);
      if (host === null) {
        const scheme = request.url.protocol;
        const http = scheme === "http:" || scheme === "https:";
        return deny(
          http ? "default: URL has no valid host" : `default: scheme ${scheme} is not allowed (http and https only)`,
          SOURCE_DEFAULT,
        );
      }
      const check = hostDecision(c, decisions, request, host, c.webAllowed, c.webBlocked, false);
      if ("effect" in check) return check;
      subject = host;
      allowRule = check.rule;
      break;
    }
    case "skill_install": {
      const host = normaliseHost(request.host);
      if (host === null) return deny(`default: ${request.host} is not a host`, SOURCE_DEFAULT);
      // A host blocked for the web is blocked for installs too.
      const blocked = blockedRule(host, c.webBlocked);
      if (blocked !== null) return deny(blocked, c.file);
      const check = hostDecision(c, decisions, request, host, c.skillHosts, null, true);
      if ("effect" in check) return check;
      subject = host;
      allowRule = check.rule;
      break;
    }
    case "browser": {
      if (!c.browserEnabled) return deny("browser_enabled is false", c.file);
      const host = normaliseHost(request.host);
      if (host === null) return deny(`default: ${request.host} is not a host`, SOURCE_DEFAULT);
      const check = hostDecision(c, decisions, request, host, c.browserAllowed, c.browserBlocked, false);
      if ("effect" in check) return check;
      subject = host;
      allowRule = check.rule;
      break;
    }
    case "device": {
      const iface = request.interface;
      if (!DEVICE_NAMES.has(iface)) return deny(`default: unknown device interface ${iface}`, SOURCE_DEFAULT);
      if (c.devicesBlocked.has("*")) return deny("blocked_device_interfaces: *", c.file);
      if (c.devicesBlocked.has(iface)) return deny(`blocked_device_interfaces: ${iface}`, c.file);
      subject = iface;
      const denied = persistentDeny(decisions, tool, "device", subject);
      if (denied) return denied;
      if (c.devicesAllowed.has(iface)) allowRule = `allowed_device_interfaces: ${iface}`;
      else if (c.devicesAllowed.has("*")) allowRule = "allowed_device_interfaces: *";
      else return deny(`allowed_device_interfaces does not list ${iface}`, c.file);
      break;
    }
    case "tool": {
      // Only resource-free tools ask this (the runner refuses it from any other: tools/tool.ts RESOURCE_REQUESTS).
      subject = tool;
      const denied = persistentDeny(decisions, tool, "tool", subject);
      if (denied) return denied;
      if (tool === "web_search") {
        if (!c.webSearchEnabled) return deny("web_search_enabled is false", c.file);
        allowRule = "web_search_enabled: true";
      } else {
        allowRule =
          c.profileName === null
            ? `default: ${tool} uses no path, command, host or device`
            : `tool_profiles: ${c.profileName} includes ${tool}`;
      }
      break;
    }
  }
  // 6. approval
  if (c.requireApproval.has(tool)) {
    const allowed = findDecision(decisions.allow, tool, request.kind, subject);
    if (allowed) return { effect: "allow", rule: `decision #${allowed.id}`, source: SOURCE_DECISIONS };
    if (mode === "allow_all") return { effect: "allow", rule: "mode: allow_all", source: SOURCE_MODE };
    return { effect: "ask", rule: `require_approval: ${tool}`, source: c.file };
  }
  // 7. allowed by the list that matched
  return { effect: "allow", rule: allowRule, source: c.file };
}

function persistentDeny(
  decisions: CompiledDecisions,
  tool: string,
  kind: ToolRequestKind,
  subject: string,
): Decision | null {
  const d = findDecision(decisions.deny, tool, kind, subject);
  return d ? deny(`decision #${d.id}`, SOURCE_DECISIONS) : null;
}

/** Steps 3 to 5 for a host: its deny list, persistent denies, then its allow list. */
function hostDecision(
  c: CompiledPolicy,
  decisions: CompiledDecisions,
  request: ToolRequest,
  host: string,
  allowed: HostList,
  blocked: HostList | null,
  exactOnly: boolean,
): Decision | { rule: string } {
  const blockedBy = blocked ? blockedRule(host, blocked) : null;
  if (blockedBy !== null) return deny(blockedBy, c.file);
  const denied = persistentDeny(decisions, request.tool, request.kind, host);
  if (denied) return denied;
  const check = allowedRule(host, allowed, exactOnly);
  return check.ok ? { rule: check.rule } : deny(check.rule, c.file);
}
