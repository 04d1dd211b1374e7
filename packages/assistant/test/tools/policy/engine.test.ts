import { describe, expect, it } from "vitest";
import type { Decision, PersistentDecision, ToolRequest } from "../../../src/tools/policy/types.ts";
import { engineFor, POLICY_FILE } from "./helpers.ts";

const A = "/srv/allowed";
const read = (path: string, tool = "read_file"): ToolRequest => ({ kind: "read", tool, path });
const write = (path: string): ToolRequest => ({ kind: "write", tool: "write_file", path });
const cmd = (executable: string, ...args: string[]): ToolRequest => ({
  kind: "command",
  tool: "run_command",
  executable,
  argv: [executable, ...args],
});
const web = (url: string, tool = "web_fetch"): ToolRequest => ({ kind: "web", tool, url: new URL(url) });
const device = (iface: string, tool = "device_invoke"): ToolRequest => ({ kind: "device", tool, interface: iface });
const skill = (host: string): ToolRequest => ({ kind: "skill_install", tool: "install_skill", host });
const browser = (host: string): ToolRequest => ({ kind: "browser", tool: "browser_navigate", host });
const tool = (name: string): ToolRequest => ({ kind: "tool", tool: name });

const ALL_KINDS: ToolRequest[] = [
  read(`${A}/a`),
  write(`${A}/a`),
  cmd("ls"),
  web("https://example.com/"),
  tool("message"),
  device("usb"),
  skill("github.com"),
  browser("example.com"),
];

const FULL = {
  allowed_read_paths: [A],
  allowed_write_paths: [A],
  allowed_commands: ["ls", "git"],
  blocked_commands: ["rm"],
  allowed_web_domains: ["example.com"],
  blocked_web_domains: ["bad.example.com"],
  web_search_enabled: true,
  allowed_device_interfaces: ["usb" as const, "local_media" as const],
  blocked_device_interfaces: ["network" as const],
  browser_enabled: true,
  browser_allowed_domains: ["example.com"],
  browser_blocked_domains: ["ads.example.com"],
};

describe("1. missing policy file denies everything", () => {
  const e = engineFor(null);
  it.each(ALL_KINDS.map((r) => [r.kind, r] as const))("%s", (_kind, request) => {
    expect(e.decide(request)).toEqual({
      effect: "deny",
      rule: "default: tools_policy.yaml is missing (deny by default)",
      source: "built-in default",
    });
  });

  it("even in allow_all mode and with allow decisions", () => {
    const allowAll = engineFor(null, { mode: "allow_all", decisions: [dec("1", "run_command", "*", "allow")] });
    expect(allowAll.decide(cmd("ls")).effect).toBe("deny");
  });
});

function dec(id: string, t: string, scope: string, effect: "allow" | "deny"): PersistentDecision {
  return { id, tool: t, scope, effect };
}

describe("an empty policy (schema defaults) grants nothing but the default skill hosts", () => {
  const e = engineFor({});
  it.each<[string, ToolRequest, Decision["effect"], string]>([
    ["read", read(`${A}/a`), "deny", `allowed_read_paths does not cover ${A}/a`],
    ["write", write(`${A}/a`), "deny", `allowed_write_paths does not cover ${A}/a`],
    ["command", cmd("ls"), "deny", "allowed_commands does not list ls"],
    ["web", web("https://example.com/"), "deny", "allowed_web_domains does not list example.com"],
    ["web_search", tool("web_search"), "deny", "web_search_enabled is false"],
    ["device", device("usb"), "deny", "allowed_device_interfaces does not list usb"],
    ["browser", browser("example.com"), "deny", "browser_enabled is false"],
    // A listed host passes the list; the install then waits for approval (install_skill is in the default require_approval).
    ["skill from github.com", skill("github.com"), "ask", "require_approval: install_skill"],
    ["skill from GitHub.com.", skill("GitHub.com."), "ask", "require_approval: install_skill"],
    ["skill from a subdomain", skill("gist.github.com"), "deny", "allowed_skill_install_hosts does not list"],
    ["skill from a lookalike", skill("github.com.evil.test"), "deny", "allowed_skill_install_hosts does not list"],
    ["skill from loopback", skill("127.0.0.1"), "deny", "does not list the loopback host"],
    ["skill from a non-host", skill("a b"), "deny", "default: a b is not a host"],
    ["message", tool("message"), "allow", "default: message uses no path, command, host or device"],
  ])("%s", (_name, request, effect, rule) => {
    const d = e.decide(request);
    expect(d.effect).toBe(effect);
    expect(d.rule).toContain(rule);
  });
});

describe("2. default_profile", () => {
  const e = engineFor({
    ...FULL,
    tool_profiles: { chat: ["message", "read_file", "run_command"] },
    default_profile: "chat",
    require_approval: [],
  });
  it.each<[string, ToolRequest, Decision["effect"], string]>([
    [
      "tool outside the profile",
      tool("web_search"),
      "deny",
      "default_profile: profile chat does not include web_search",
    ],
    ["write outside the profile", write(`${A}/x`), "deny", "default_profile: profile chat does not include write_file"],
    ["tool in the profile", tool("message"), "allow", "tool_profiles: chat includes message"],
    ["path rule still applies", read("/etc/passwd"), "deny", "allowed_read_paths does not cover /etc/passwd"],
    ["command rule still applies", cmd("rm"), "deny", "blocked_commands: rm"],
    ["allowed by profile and path", read(`${A}/x`), "allow", `allowed_read_paths: ${A}`],
  ])("%s", (_name, request, effect, rule) => {
    expect(e.decide(request)).toEqual({ effect, rule, source: POLICY_FILE });
  });

  it("the profile check comes before allow_all", () => {
    expect(e.withMode("allow_all").decide(tool("web_search")).effect).toBe("deny");
  });
});

describe("3-7. deny lists, decisions, allow lists, approval", () => {
  const base = engineFor({ ...FULL, require_approval: ["write_file", "run_command", "device_invoke"] });

  it.each<[string, ToolRequest, Decision["effect"], string]>([
    ["require_approval asks for a write", write(`${A}/x`), "ask", "require_approval: write_file"],
    ["require_approval asks for a command", cmd("ls"), "ask", "require_approval: run_command"],
    ["require_approval asks for a device", device("usb"), "ask", "require_approval: device_invoke"],
    ["no approval needed for reads", read(`${A}/x`), "allow", `allowed_read_paths: ${A}`],
    ["blocked command never asks", cmd("rm"), "deny", "blocked_commands: rm"],
    ["unlisted command never asks", cmd("curl"), "deny", "allowed_commands does not list curl"],
    ["unlisted write never asks", write("/etc/x"), "deny", "allowed_write_paths does not cover /etc/x"],
    ["blocked device", device("network"), "deny", "blocked_device_interfaces: network"],
    ["unlisted device", device("synthetic_input"), "deny", "allowed_device_interfaces does not list synthetic_input"],
    ["unknown device", device("bluetooth"), "deny", "default: unknown device interface bluetooth"],
    ["browser allowed", browser("www.example.com"), "allow", "browser_allowed_domains: example.com"],
    ["browser blocked", browser("ads.example.com"), "deny", "browser_blocked_domains: ads.example.com"],
    ["browser lookalike", browser("example.com.evil.test"), "deny", "browser_allowed_domains does not list"],
    ["browser loopback", browser("127.0.0.1"), "deny", "does not list the loopback host 127.0.0.1"],
    ["skill host blocked for the web", skill("bad.example.com"), "deny", "blocked_web_domains: bad.example.com"],
    ["web_search enabled", tool("web_search"), "allow", "web_search_enabled: true"],
    // A resource tool asking as a resource-free one is refused before the engine: test/tools/toolContract.test.ts.
  ])("%s", (_name, request, effect, rule) => {
    const d = base.decide(request);
    expect(d.effect).toBe(effect);
    expect(d.rule).toContain(rule);
  });

  it("blocked_web_domains also blocks skill installs", () => {
    const e = engineFor({
      allowed_skill_install_hosts: ["*"],
      blocked_web_domains: ["evil.test"],
      require_approval: [],
    });
    expect(e.decide(skill("evil.test"))).toMatchObject({ effect: "deny", rule: "blocked_web_domains: evil.test" });
    expect(e.decide(skill("ok.test"))).toMatchObject({ effect: "allow", rule: "allowed_skill_install_hosts: *" });
    expect(e.decide(skill("10.0.0.1")).effect).toBe("deny");
  });

  it("blocked device * beats allowed *", () => {
    const e = engineFor({ allowed_device_interfaces: ["*"], blocked_device_interfaces: ["*"], require_approval: [] });
    expect(e.decide(device("usb"))).toMatchObject({ effect: "deny", rule: "blocked_device_interfaces: *" });
    const open = engineFor({ allowed_device_interfaces: ["*"], require_approval: [] });
    expect(open.decide(device("usb"))).toMatchObject({ effect: "allow", rule: "allowed_device_interfaces: *" });
  });

  describe("mode allow_all skips asking, never a deny", () => {
    const all = base.withMode("allow_all");
    it.each<[string, ToolRequest, Decision["effect"], string, string]>([
      ["approval skipped", cmd("ls"), "allow", "mode: allow_all", "approval mode"],
      ["write approval skipped", write(`${A}/x`), "allow", "mode: allow_all", "approval mode"],
      ["deny list still wins", cmd("rm"), "deny", "blocked_commands: rm", POLICY_FILE],
      [
        "missing allow rule still denies",
        cmd("python3"),
        "deny",
        "allowed_commands does not list python3",
        POLICY_FILE,
      ],
      [
        "path outside still denied",
        write("/etc/shadow"),
        "deny",
        "allowed_write_paths does not cover /etc/shadow",
        POLICY_FILE,
      ],
      [
        "private host still denied",
        web("http://10.0.0.1/"),
        "deny",
        "allowed_web_domains does not list the private host 10.0.0.1 (non-public hosts must be listed exactly; * covers public hosts only)",
        POLICY_FILE,
      ],
    ])("%s", (_name, request, effect, rule, source) => {
      expect(all.decide(request)).toEqual({ effect, rule, source });
    });

    it("withMode returns a new engine and leaves the original alone", () => {
      expect(all.mode).toBe("allow_all");
      expect(base.mode).toBe("ask_me");
      expect(base.decide(cmd("ls")).effect).toBe("ask");
    });
  });

  describe("persistent decisions", () => {
    const e = base.withDecisions([
      dec("7", "run_command", "git", "deny"),
      dec("3", "run_command", "ls", "allow"),
      dec("4", "run_command", "python3", "allow"),
      dec("5", "read_file", `${A}/private`, "deny"),
      dec("6", "write_file", `${A}/notes`, "allow"),
      dec("8", "web_fetch", "bad-but-allowed.example.com", "deny"),
      dec("9", "device_invoke", "usb", "allow"),
      dec("10", "write_file", "ls", "allow"),
      dec("11", "message", "*", "deny"),
      dec("12", "browser_navigate", "shop.example.com", "deny"),
    ]);
    it.each<[string, ToolRequest, Decision["effect"], string, string]>([
      ["persistent deny beats the allow list", cmd("git", "status"), "deny", "decision #7", "assistant.db decisions"],
      ["persistent allow skips approval for its scope", cmd("ls"), "allow", "decision #3", "assistant.db decisions"],
      [
        "persistent allow never widens the allow list",
        cmd("python3"),
        "deny",
        "allowed_commands does not list python3",
        POLICY_FILE,
      ],
      ["deny list beats a persistent allow", cmd("rm"), "deny", "blocked_commands: rm", POLICY_FILE],
      ["path deny decision covers the prefix", read(`${A}/private/x`), "deny", "decision #5", "assistant.db decisions"],
      [
        "path deny decision on whole segments",
        read(`${A}/private-not/x`),
        "allow",
        `allowed_read_paths: ${A}`,
        POLICY_FILE,
      ],
      [
        "path allow decision skips approval",
        write(`${A}/notes/today.md`),
        "allow",
        "decision #6",
        "assistant.db decisions",
      ],
      [
        "path allow decision not for a lookalike",
        write(`${A}/notes-evil/x`),
        "ask",
        "require_approval: write_file",
        POLICY_FILE,
      ],
      [
        "path allow decision not outside its scope",
        write(`${A}/other`),
        "ask",
        "require_approval: write_file",
        POLICY_FILE,
      ],
      [
        "decision for another tool does not apply",
        write(`${A}/ls`),
        "ask",
        "require_approval: write_file",
        POLICY_FILE,
      ],
      [
        "domain deny decision covers subdomains",
        web("https://x.bad-but-allowed.example.com/"),
        "deny",
        "decision #8",
        "assistant.db decisions",
      ],
      [
        "domain deny decision does not cover the parent",
        web("https://example.com/"),
        "allow",
        "allowed_web_domains: example.com",
        POLICY_FILE,
      ],
      ["device allow decision", device("usb"), "allow", "decision #9", "assistant.db decisions"],
      [
        "device allow decision for usb only",
        device("local_media"),
        "ask",
        "require_approval: device_invoke",
        POLICY_FILE,
      ],
      ["tool deny decision with *", tool("message"), "deny", "decision #11", "assistant.db decisions"],
      ["browser deny decision", browser("shop.example.com"), "deny", "decision #12", "assistant.db decisions"],
    ])("%s", (_name, request, effect, rule, source) => {
      expect(e.decide(request)).toEqual({ effect, rule, source });
    });

    it("a * allow decision does not open private hosts or unlisted commands", () => {
      const wide = engineFor(
        { allowed_web_domains: ["*"], allowed_commands: ["ls"], require_approval: ["web_fetch", "run_command"] },
        { decisions: [dec("1", "web_fetch", "*", "allow"), dec("2", "run_command", "*", "allow")] },
      );
      expect(wide.decide(web("http://169.254.169.254/")).effect).toBe("deny");
      expect(wide.decide(web("https://example.org/"))).toMatchObject({ effect: "allow", rule: "decision #1" });
      expect(wide.decide(cmd("curl")).effect).toBe("deny");
      expect(wide.decide(cmd("ls"))).toMatchObject({ effect: "allow", rule: "decision #2" });
    });

    it("a * deny decision denies every resource of its tool", () => {
      const closed = base.withDecisions([dec("1", "web_fetch", "*", "deny")]);
      expect(closed.decide(web("https://example.com/"))).toMatchObject({ effect: "deny", rule: "decision #1" });
      expect(closed.decide(read(`${A}/x`)).effect).toBe("allow");
    });

    it("an empty scope matches nothing", () => {
      const odd = base.withDecisions([dec("1", "run_command", "  ", "deny")]);
      expect(odd.decide(cmd("ls")).effect).toBe("ask");
    });

    it("withDecisions leaves the original engine alone", () => {
      expect(base.decide(cmd("git")).effect).toBe("ask");
      expect(e.decide(cmd("git")).effect).toBe("deny");
    });
  });
});

describe("every decision names a rule and a source", () => {
  const engines = [
    engineFor(null),
    engineFor({}),
    engineFor({ ...FULL }),
    engineFor({ ...FULL }, { mode: "allow_all", decisions: [dec("1", "run_command", "ls", "allow")] }),
  ];
  const requests = [...ALL_KINDS, cmd("rm"), web("file:///etc/passwd"), tool("web_search"), read("relative")];
  it("for all kinds on all engines", () => {
    const sources = new Set([POLICY_FILE, "built-in default", "assistant.db decisions", "approval mode"]);
    let count = 0;
    for (const e of engines) {
      for (const r of requests) {
        const d = e.decide(r);
        expect(["allow", "deny", "ask"]).toContain(d.effect);
        expect(d.rule.length).toBeGreaterThan(3);
        expect(sources.has(d.source)).toBe(true);
        count++;
      }
    }
    expect(count).toBe(engines.length * requests.length);
  });
});
