import { z } from "zod";
import { didYouMean } from "../util/closestMatch.ts";
import { AppError } from "../util/errors.ts";
import { CHAT_CATEGORIES } from "./classify.ts";
import { RELATED_TYPES, TASK_TYPE_ALIASES } from "./routing.ts";

// The task type names the router knows (docs/models.md): the chat categories, the internal types, the specialists'
// agent ids and the aliases. A name outside this list would be routed silently as `conversation` or, written into
// llm_router.yaml, never be used: every place a person types one (`config models set`, `--task-type`, the API's
// task_type) refuses it with the close match.

export const KNOWN_TASK_TYPES: readonly string[] = [
  ...new Set([
    ...CHAT_CATEGORIES,
    "system",
    "orchestrator",
    "image_generation",
    ...Object.keys(RELATED_TYPES),
    ...Object.keys(TASK_TYPE_ALIASES),
  ]),
].sort();

/** Why `name` is not a task type (with the close match), or undefined when it is one. */
export function taskTypeProblem(name: string, noun = "task type"): string | undefined {
  if (KNOWN_TASK_TYPES.includes(name)) return undefined;
  return `unknown ${noun} "${name.slice(0, 64)}"${didYouMean(name, KNOWN_TASK_TYPES)}; the categories are ${CHAT_CATEGORIES.join(", ")} (\`assistant config models routes\` lists every route)`;
}

/**
 * The category a route entry is written under: `name` itself, or the category an alias stands for (an entry
 * under `code` would never be read: routing.ts resolves the alias first). Unknown names are refused.
 */
export function canonicalCategory(name: string): string {
  const problem = taskTypeProblem(name, "category");
  if (problem) throw new AppError("invalid_request", problem, { field: "category" });
  return TASK_TYPE_ALIASES[name] ?? name;
}

/** The `task_type` field of the API and of schedules: a known name, else the refusal with the close match. */
export const taskTypeField = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, "expected a task type name such as conversation")
  .superRefine((value, ctx) => {
    const problem = taskTypeProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
