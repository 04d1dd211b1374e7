import { homedir } from "node:os";
import { join } from "node:path";
import * as z from "zod";
import { nonEmptyString } from "./common.ts";

// tools_policy.yaml (docs/tools.md). Every default denies: a missing or empty file, or a missing key,
// never grants anything. Strict, so a misspelt allow list is an error instead of a silent deny.

export const DEVICE_INTERFACES = ["local_media", "system", "synthetic_input", "usb", "network"] as const;
export type DeviceInterface = (typeof DEVICE_INTERFACES)[number];

/** Code-hosting hosts `install_skill` may fetch from when the file does not say otherwise: a short list. */
export const DEFAULT_SKILL_INSTALL_HOSTS = [
  "github.com",
  "api.github.com",
  "raw.githubusercontent.com",
  "gitlab.com",
  "codeberg.org",
];
/** Tools that ask before running when the file does not list its own `require_approval`. */
export const DEFAULT_REQUIRE_APPROVAL = ["write_file", "run_command", "device_invoke", "install_skill"];

const list = z.array(nonEmptyString).default([]);
// `~` is not expanded (no shell reads this file): `~/notes` would be a folder named `~` in the daemon's working
// directory. Refused with the full path to write instead, so the allow list never means something else.
const pathEntry = nonEmptyString.refine((entry) => !/^~(?:[\\/]|$)/.test(entry), {
  error: (issue) =>
    `"${issue.input}": ~ is not expanded here; write the full path (${join(homedir(), String(issue.input).slice(2))})`,
});
const pathList = z.array(pathEntry).default([]);
const deviceList = z.array(z.enum([...DEVICE_INTERFACES, "*"])).default([]);
const positiveInt = z.number().int().positive();

export const toolsPolicySchema = z
  .strictObject({
    allowed_read_paths: pathList,
    allowed_write_paths: pathList,
    allowed_commands: list,
    blocked_commands: list,
    command_timeout_secs: positiveInt.optional(), // unset: the tool's own default applies
    run_command_default_cwd_workspace: z.boolean().default(false),
    // Where no sandbox hides the daemon's files from commands, `allowed_commands: ['*']` needs this consent.
    unsandboxed_commands_acknowledged: z.boolean().default(false),
    allowed_web_domains: list,
    blocked_web_domains: list,
    web_search_enabled: z.boolean().default(false),
    tool_profiles: z.record(nonEmptyString, z.array(nonEmptyString)).default({}),
    default_profile: nonEmptyString.optional(),
    allowed_skill_install_hosts: z.array(nonEmptyString).default(() => [...DEFAULT_SKILL_INSTALL_HOSTS]),
    require_approval: z.array(nonEmptyString).default(() => [...DEFAULT_REQUIRE_APPROVAL]),
    allowed_device_interfaces: deviceList,
    blocked_device_interfaces: deviceList,
    browser_enabled: z.boolean().default(false),
    browser_allowed_domains: list,
    browser_blocked_domains: list,
    browser_headless: z.boolean().default(true),
    browser_action_timeout_secs: positiveInt.default(30),
    browser_session_timeout_secs: positiveInt.default(300),
  })
  .superRefine((policy, ctx) => {
    // A profile that does not exist would deny every tool with no visible reason; say so at load time.
    if (policy.default_profile !== undefined && !(policy.default_profile in policy.tool_profiles)) {
      ctx.addIssue({
        code: "custom",
        path: ["default_profile"],
        message: `no profile "${policy.default_profile}" in tool_profiles`,
      });
    }
  });

export type ToolsPolicy = z.output<typeof toolsPolicySchema>;
export type ToolsPolicyInput = z.input<typeof toolsPolicySchema>;

/** The policy of a missing or empty file: no paths, no commands, no web, no devices, no browser. */
export function denyAllToolsPolicy(): ToolsPolicy {
  return toolsPolicySchema.parse({});
}
