import { parseConfigText } from "../config/configFiles.ts";
import { validateConfigValue } from "../config/configValue.ts";
import { toolsPolicySchema } from "../config/schemas/toolsPolicy.ts";
import { writeFileAtomic } from "../util/atomicWrite.ts";
import { AppError, ConfigError } from "../util/errors.ts";
import { MAX_CONFIG_BYTES, readConfigText } from "../util/fileText.ts";

// tools_policy.yaml as text, for the settings editor (`GET/PUT /api/tools/policy`). A save validates the whole
// text exactly as the policy source will read it (YAML syntax, then the schema) and only then replaces the file
// atomically with the text as sent, comments and layout included. A refused text leaves the file untouched.
// PolicySource notices the new file (its inode changed) at the next tool call: no restart.

export interface PolicyText {
  /** The file's text; empty when the file does not exist (everything is denied then). */
  yaml: string;
  file: string;
}

export function readPolicyText(file: string): PolicyText {
  return { yaml: readConfigText(file) ?? "", file };
}

export function savePolicyText(file: string, yaml: string): PolicyText {
  if (Buffer.byteLength(yaml, "utf8") > MAX_CONFIG_BYTES)
    throw new AppError("invalid_request", "body.yaml: the policy is larger than 1 MB", { field: "body.yaml" });
  let raw: unknown;
  try {
    raw = parseConfigText("yaml", yaml, "tools_policy.yaml");
    if (raw === null)
      throw new ConfigError(
        "tools_policy.yaml",
        "",
        "the policy is empty, which denies every tool; remove the rules you do not want instead",
      );
    validateConfigValue(toolsPolicySchema, raw, "tools_policy.yaml");
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // The editor shows the message; key and reason let it point at the line or the key.
    throw new AppError("invalid_request", `body.yaml: ${error.message}; the file was not changed`, {
      field: "body.yaml",
      key: error.key,
      reason: error.reason,
    });
  }
  writeFileAtomic(file, yaml);
  return readPolicyText(file);
}
