import { randomUUID } from "node:crypto";
import { z } from "zod";
import { type Db, statement } from "../../store/database.ts";
import { DEFAULT_PAGE_LIMIT, decodeSeqCursor, encodeSeqCursor, type Page } from "../../util/cursor.ts";
import { AppError } from "../../util/errors.ts";

// Persistent permission decisions (docs/http-api.md#permissions): an allow or deny rule by
// tool and scope, where the scope is a command name, a path prefix, a domain, or `*`. One rule per tool and scope.

export const EFFECTS = ["allow", "deny"] as const;
export type DecisionEffect = (typeof EFFECTS)[number];

export const TOOL_PATTERN = /^[a-z0-9_]{1,64}$/;
export const MAX_SCOPE_CHARS = 1024;

export const decisionSchema = z
  .object({
    id: z.string(),
    tool: z.string(),
    scope: z.string(),
    effect: z.enum(EFFECTS),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "Decision" });

export type Decision = z.infer<typeof decisionSchema>;

export interface DecisionInput {
  tool: string;
  scope: string;
  effect: string;
}

interface Row extends Decision {
  seq: number;
}

const COLUMNS = "seq, id, tool, scope, effect, created_at, updated_at";

function invalid(field: string, message: string): AppError {
  return new AppError("invalid_request", `${field}: ${message}`, { field });
}

/** Checks a rule as given by a person or a client; throws `invalid_request` naming the field. */
export function validateDecision(input: DecisionInput): { tool: string; scope: string; effect: DecisionEffect } {
  if (typeof input.tool !== "string" || !(input.tool === "*" || TOOL_PATTERN.test(input.tool))) {
    throw invalid("tool", "a tool name (1 to 64 of a-z, 0-9, _) or *");
  }
  if (typeof input.scope !== "string" || input.scope.length === 0 || input.scope.length > MAX_SCOPE_CHARS) {
    throw invalid("scope", `a command name, path prefix, domain or *, 1 to ${MAX_SCOPE_CHARS} characters`);
  }
  if (input.scope.includes("\0")) throw invalid("scope", "must not contain a NUL character");
  if (!(EFFECTS as readonly string[]).includes(input.effect)) throw invalid("effect", "allow or deny");
  return { tool: input.tool, scope: input.scope, effect: input.effect as DecisionEffect };
}

const toDecision = ({ seq: _seq, ...decision }: Row): Decision => decision;

export class PersistentDecisions {
  readonly #db: Db;
  readonly #now: () => Date;

  constructor(db: Db, options: { now?: () => Date } = {}) {
    this.#db = db;
    this.#now = options.now ?? (() => new Date());
  }

  /** Oldest first, paginated. */
  list(query: { limit?: number; cursor?: string } = {}): Page<Decision> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const after = decodeSeqCursor(query.cursor) ?? 0;
    const rows = statement(
      this.#db,
      `SELECT ${COLUMNS} FROM permission_decisions WHERE seq > ? ORDER BY seq LIMIT ?`,
    ).all(after, limit + 1) as Row[];
    const page = rows.slice(0, limit);
    return { items: page.map(toDecision), next_cursor: rows.length > limit ? encodeSeqCursor(page.at(-1)!.seq) : null };
  }

  /** Every rule (for the policy chain). */
  all(): Decision[] {
    return (statement(this.#db, `SELECT ${COLUMNS} FROM permission_decisions ORDER BY seq`).all() as Row[]).map(
      toDecision,
    );
  }

  create(input: DecisionInput): Decision {
    const rule = validateDecision(input);
    const now = this.#now().toISOString();
    const decision: Decision = { id: randomUUID(), ...rule, created_at: now, updated_at: now };
    const existing = statement(
      this.#db,
      "SELECT id, effect FROM permission_decisions WHERE tool = ? AND scope = ?",
    ).get(rule.tool, rule.scope) as { id: string; effect: string } | undefined;
    if (existing) {
      throw new AppError(
        "conflict",
        `a decision for tool ${rule.tool} and scope ${rule.scope} already exists (${existing.effect}, id ${existing.id}); delete it first`,
        { id: existing.id },
      );
    }
    statement(
      this.#db,
      "INSERT INTO permission_decisions (id, tool, scope, effect, created_at, updated_at) VALUES (@id, @tool, @scope, @effect, @created_at, @updated_at)",
    ).run(decision);
    return decision;
  }

  delete(id: string): Decision {
    const row = statement(this.#db, `SELECT ${COLUMNS} FROM permission_decisions WHERE id = ?`).get(id) as
      | Row
      | undefined;
    if (!row) throw new AppError("not_found", `no permission decision ${id}`, { id });
    statement(this.#db, "DELETE FROM permission_decisions WHERE id = ?").run(id);
    return toDecision(row);
  }
}
