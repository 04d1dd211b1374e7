import * as z from "zod";

// Routing rules declared by plugins (manifest `routing_rules`) and skills (skill.json `routing_rules`): a message
// matching a rule's keywords or pattern goes to a task type, an agent or a skill. Patterns are wildcards (`*`,
// `?`), matched in linear time: a rule from a third-party plugin must never be able to stall the daemon the way
// a backtracking regular expression could.

const MAX_RULES = 50;
const MAX_KEYWORDS = 50;

const name = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "1 to 64 letters, digits, _, . or -");

export const routingRuleSchema = z
  .strictObject({
    id: name.optional(),
    keywords: z.array(z.string().trim().min(1).max(100)).max(MAX_KEYWORDS).optional(),
    pattern: z.string().min(1).max(200).optional(),
    task_type: name.optional(),
    agent: name.optional(),
    skill: name.optional(),
    priority: z.number().int().min(-1000).max(1000).default(0),
  })
  .refine((r) => (r.keywords?.length ?? 0) > 0 || r.pattern !== undefined, {
    message: "a rule needs keywords or a pattern",
  })
  .refine((r) => [r.task_type, r.agent, r.skill].filter((t) => t !== undefined).length <= 1, {
    message: "a rule routes to one of task_type, agent or skill",
  });

export const routingRulesSchema = z.array(routingRuleSchema).max(MAX_RULES);

export type RoutingRuleInput = z.input<typeof routingRuleSchema>;
type ParsedRule = z.output<typeof routingRuleSchema>;

const ruleTargetSchema = z.object({ kind: z.enum(["task_type", "agent", "skill"]), name: z.string() });
export type RuleTarget = z.infer<typeof ruleTargetSchema>;

/** A rule as loaded: where it comes from and where it sends a matching message. */
export const loadedRuleSchema = z
  .object({
    id: z.string(),
    source: z.object({ kind: z.enum(["plugin", "skill"]), id: z.string() }),
    keywords: z.array(z.string()),
    pattern: z.string().nullable(),
    target: ruleTargetSchema,
    priority: z.number(),
  })
  .meta({ id: "RoutingRule" });

export type RoutingRule = z.infer<typeof loadedRuleSchema>;

export const ruleMatchSchema = z.object({
  rule: loadedRuleSchema,
  /** What matched: `keyword: invoice` or `pattern: *refund*`. */
  matched_on: z.string(),
});

export type RuleMatch = z.infer<typeof ruleMatchSchema>;

/** What testing a message against the rules answers (GET and POST of /api/plugins/routing_rules). */
export const ruleMatchResultSchema = z
  .union([
    ruleMatchSchema.extend({ matched: z.literal(true), target: ruleTargetSchema }),
    z.object({ matched: z.literal(false) }),
  ])
  .meta({ id: "RoutingMatch" });

/**
 * Turns declared rules into loaded ones. `defaultTarget` is used when a rule names no target (a skill's rules
 * route to the skill itself); without one such a rule is refused by the caller's validation.
 */
export function loadRules(
  declared: readonly ParsedRule[],
  source: RoutingRule["source"],
  defaultTarget: RuleTarget | null,
): RoutingRule[] {
  return declared.map((r, i) => {
    const target: RuleTarget | null = r.task_type
      ? { kind: "task_type", name: r.task_type }
      : r.agent
        ? { kind: "agent", name: r.agent }
        : r.skill
          ? { kind: "skill", name: r.skill }
          : defaultTarget;
    if (target === null) throw new Error(`routing rule ${i + 1} names no task_type, agent or skill`);
    return {
      id: r.id ?? `${source.id}#${i + 1}`,
      source,
      keywords: (r.keywords ?? []).map((k) => k.toLowerCase()),
      pattern: r.pattern ?? null,
      target,
      priority: r.priority,
    };
  });
}

/** The best rule for a message: highest priority first, then declaration order. Null when none matches. */
export function matchRules(rules: readonly RoutingRule[], message: string): RuleMatch | null {
  const text = message.toLowerCase();
  const words = new Set(text.split(/[^\p{L}\p{N}_-]+/u).filter(Boolean));
  let best: RuleMatch | null = null;
  for (const rule of rules) {
    if (best && rule.priority <= best.rule.priority) continue;
    const hit = matchOne(rule, text, words);
    if (hit) best = { rule, matched_on: hit };
  }
  return best;
}

function matchOne(rule: RoutingRule, text: string, words: ReadonlySet<string>): string | null {
  for (const k of rule.keywords) {
    // A keyword of several words matches as a phrase; a single word must be a whole word.
    if (k.includes(" ") ? text.includes(k) : words.has(k)) return `keyword: ${k}`;
  }
  if (rule.pattern !== null && wildcardMatch(rule.pattern.toLowerCase(), text)) return `pattern: ${rule.pattern}`;
  return null;
}

/** `*` any run of characters, `?` one character; the whole text must match. Greedy with one backtrack point. */
export function wildcardMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    if (p < pattern.length && (pattern[p] === "?" || pattern[p] === text[t])) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === "*") {
      star = p++;
      mark = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === "*") p++;
  return p === pattern.length;
}
