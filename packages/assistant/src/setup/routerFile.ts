import { isMap, isScalar, type Pair } from "yaml";
import { validateConfigValue } from "../config/configValue.ts";
import { DEFAULT_ROUTER_YAML } from "../config/defaults.ts";
import { llmRouterSchema } from "../config/schemas/llmRouter.ts";
import { parseYaml, renderYaml, yamlDocumentValue } from "../config/yamlDocument.ts";
import { type InitAnswers, isLocalServer, vaultKeyFor } from "./answers.ts";

// The llm_router.yaml `assistant init` writes. It starts from the commented default file and, for a chosen
// provider, puts that provider first in `conversation` with the embedded model and core kept as fallbacks, so
// the assistant still answers when the server is down or the key is missing. Edits go through the YAML
// Document API so user-typed values are always quoted correctly.

const EMBEDDED = { provider: "assistant_embedded", model: "default" };
const CORE = { provider: "assistant_core", model: "core" };

export function routerYamlFor(answers: InitAnswers, file = "llm_router.yaml"): string {
  if (answers.provider === "embedded") return DEFAULT_ROUTER_YAML;
  const doc = parseYaml(DEFAULT_ROUTER_YAML, file);
  const provider = answers.provider;
  const settings = isLocalServer(provider)
    ? { base_url: answers.server_url }
    : { api_key_ref: `vault://${vaultKeyFor(provider)}` };

  const root = doc.contents;
  const taskTypes = doc.get("task_types", true);
  if (!isMap(root) || !isMap(taskTypes)) throw new Error("DEFAULT_ROUTER_YAML has no task_types mapping");
  // The "Optional providers" comment sits above task_types; it belongs above the real providers block now.
  const index = root.items.findIndex((pair) => isScalar(pair.key) && pair.key.value === "task_types");
  const taskTypesKey = root.items[index]!.key as { commentBefore?: string | null; spaceBefore?: boolean };
  const providers = doc.createPair("providers", { [provider]: settings }) as Pair<{
    commentBefore?: string | null;
    spaceBefore?: boolean;
  }>;
  providers.key!.commentBefore = taskTypesKey.commentBefore ?? null;
  providers.key!.spaceBefore = true;
  taskTypesKey.commentBefore = null;
  taskTypesKey.spaceBefore = true;
  root.items.splice(index, 0, providers as never);

  taskTypes.set(
    "conversation",
    doc.createNode({ primary: { provider, model: answers.model }, fallback: [EMBEDDED, CORE] }),
  );
  taskTypes.commentBefore = isLocalServer(provider)
    ? ` Your local model server answers first. When it is unreachable the embedded local model takes over, and\n the built-in core answers help and status last.`
    : ` ${provider} answers first, with the key stored in the vault (\`assistant vault set ${vaultKeyFor(provider)}\`).\n Without the key, or offline, the embedded local model takes over, and the built-in core answers last.`;

  // Whatever the user typed, the file written is one the daemon accepts.
  validateConfigValue(llmRouterSchema, yamlDocumentValue(doc, file), file);
  return renderYaml(doc);
}
