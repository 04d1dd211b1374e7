import { describe, expect, it } from "vitest";
import { loadConfig, validateConfigFiles } from "../../src/config/configFiles.ts";
import { denyAllToolsPolicy } from "../../src/config/schemas/toolsPolicy.ts";
import { configError, tempData } from "./helpers.ts";

function loadPolicy(text: string | undefined) {
  const data = tempData();
  const file = text === undefined ? data.paths.toolsPolicy : data.write("tools_policy.yaml", text);
  return { file, data, load: () => loadConfig("tools_policy", data.paths) };
}

function expectDenyAll(policy: ReturnType<typeof denyAllToolsPolicy>) {
  expect(policy.allowed_read_paths).toEqual([]);
  expect(policy.allowed_write_paths).toEqual([]);
  expect(policy.allowed_commands).toEqual([]);
  expect(policy.allowed_web_domains).toEqual([]);
  expect(policy.allowed_device_interfaces).toEqual([]);
  expect(policy.web_search_enabled).toBe(false);
  expect(policy.browser_enabled).toBe(false);
  expect(policy.default_profile).toBeUndefined();
}

describe("tools_policy.yaml", () => {
  it("loads every key of the table", () => {
    const policy = loadPolicy(`allowed_read_paths: [".", /home/me/notes]
allowed_write_paths: [/home/me/notes/drafts]
allowed_commands: ["*"]
blocked_commands: [rm]
command_timeout_secs: 60
run_command_default_cwd_workspace: true
unsandboxed_commands_acknowledged: true
allowed_web_domains: [example.com]
blocked_web_domains: [evil.example]
web_search_enabled: true
tool_profiles:
  reader: [read_file, list_dir]
default_profile: reader
allowed_skill_install_hosts: [git.example]
require_approval: [write_file]
allowed_device_interfaces: [usb, network]
blocked_device_interfaces: ["*"]
browser_enabled: true
browser_allowed_domains: [docs.example]
browser_blocked_domains: [ads.example]
browser_headless: false
browser_action_timeout_secs: 10
browser_session_timeout_secs: 60
`).load();
    expect(policy).toEqual({
      allowed_read_paths: [".", "/home/me/notes"],
      allowed_write_paths: ["/home/me/notes/drafts"],
      allowed_commands: ["*"],
      blocked_commands: ["rm"],
      command_timeout_secs: 60,
      run_command_default_cwd_workspace: true,
      unsandboxed_commands_acknowledged: true,
      allowed_web_domains: ["example.com"],
      blocked_web_domains: ["evil.example"],
      web_search_enabled: true,
      tool_profiles: { reader: ["read_file", "list_dir"] },
      default_profile: "reader",
      allowed_skill_install_hosts: ["git.example"],
      require_approval: ["write_file"],
      allowed_device_interfaces: ["usb", "network"],
      blocked_device_interfaces: ["*"],
      browser_enabled: true,
      browser_allowed_domains: ["docs.example"],
      browser_blocked_domains: ["ads.example"],
      browser_headless: false,
      browser_action_timeout_secs: 10,
      browser_session_timeout_secs: 60,
    });
  });

  it("denies everything when the file is missing", () => {
    const { load, data } = loadPolicy(undefined);
    const policy = load();
    expectDenyAll(policy);
    expect(policy).toEqual(denyAllToolsPolicy());
    const report = validateConfigFiles(data.paths, { projectRoot: data.projectRoot }).find(
      (r) => r.id === "tools_policy",
    );
    expect(report?.status).toBe("missing");
  });

  it.each([
    ["empty", ""],
    ["blank", "\n  \n"],
    ["comments only", "# nothing allowed yet\n"],
  ])("denies everything when the file is %s, and reports it ok", (_kind, text) => {
    const { load, data } = loadPolicy(text);
    expect(load()).toEqual(denyAllToolsPolicy());
    const report = validateConfigFiles(data.paths, { projectRoot: data.projectRoot }).find(
      (r) => r.id === "tools_policy",
    );
    expect(report?.status).toBe("ok");
  });

  it("defaults the browser settings and the tools that ask first", () => {
    const policy = denyAllToolsPolicy();
    expect(policy.browser_headless).toBe(true);
    expect(policy.browser_action_timeout_secs).toBe(30);
    expect(policy.browser_session_timeout_secs).toBe(300);
    expect(policy.command_timeout_secs).toBeUndefined();
    expect(policy.require_approval).toEqual(["write_file", "run_command", "device_invoke", "install_skill"]);
  });

  it("refuses unknown keys, so a misspelt allow list is not silently ignored", () => {
    const { file, load } = loadPolicy("allowed_read_path: [/home]\n");
    const error = configError(load);
    expect(error.file).toBe(file);
    expect(error.key).toBe("allowed_read_path");
    expect(error.reason).toBe("unknown key");
  });

  it.each([
    ["allowed_read_paths: /home\n", "allowed_read_paths", "expected array, got string"],
    ["web_search_enabled: maybe\n", "web_search_enabled", "expected boolean"],
    ["command_timeout_secs: -5\n", "command_timeout_secs", ">0"],
    ["browser_action_timeout_secs: 1.5\n", "browser_action_timeout_secs", "int"],
    ["tool_profiles:\n  r: read_file\n", "tool_profiles.r", "expected array"],
    ["allowed_commands: [git, 3]\n", "allowed_commands[1]", "expected string, got number"],
    ["allowed_device_interfaces: [usb, bluetooth]\n", "allowed_device_interfaces[1]", '"bluetooth" is not allowed'],
  ])("reports wrong types: %s", (text, key, reason) => {
    const error = configError(loadPolicy(text).load);
    expect(error.key).toBe(key);
    expect(error.reason).toContain(reason);
  });

  it("refuses a default_profile that tool_profiles does not define", () => {
    const error = configError(loadPolicy("tool_profiles:\n  reader: [read_file]\ndefault_profile: writer\n").load);
    expect(error.key).toBe("default_profile");
    expect(error.reason).toContain('"writer"');
  });

  it("reports a bare * (a YAML alias) as a syntax error with its position", () => {
    const error = configError(loadPolicy("allowed_commands: [*]\n").load);
    expect(error.key).toBe("line 1, column 20");
    expect(error.reason).toContain("YAML syntax error");
  });
});
