import { type ToolsPolicy, type ToolsPolicyInput, toolsPolicySchema } from "../../../src/config/schemas/toolsPolicy.ts";
import { createPolicyEngine, type PolicyEngine, type PolicyEngineOptions } from "../../../src/tools/policy/engine.ts";

export const POLICY_FILE = "/data/tools_policy.yaml";

export function policy(input: ToolsPolicyInput): ToolsPolicy {
  return toolsPolicySchema.parse(input);
}

/** An engine over a policy given as the YAML keys would be, ask_me mode, case-sensitive paths. */
export function engineFor(
  input: ToolsPolicyInput | null,
  extra: Partial<Omit<PolicyEngineOptions, "policy">> = {},
): PolicyEngine {
  return createPolicyEngine({
    policy: input === null ? null : policy(input),
    policyFile: POLICY_FILE,
    cwd: "/srv/work",
    caseInsensitive: false,
    ...extra,
  });
}
