import { type Db, statement } from "../../store/database.ts";
import { AppError } from "../../util/errors.ts";

// The global approval mode (docs/http-api.md#permissions): `ask_me` queues sensitive tool calls for review, `allow_all`
// lets them run. Stored in the settings table so it outlives a restart; anything unreadable there means `ask_me`.

export const APPROVAL_MODES = ["ask_me", "allow_all"] as const;
export type ApprovalModeValue = (typeof APPROVAL_MODES)[number];
export const DEFAULT_APPROVAL_MODE: ApprovalModeValue = "ask_me";

const SETTINGS_KEY = "permissions.mode";

export function isApprovalMode(value: unknown): value is ApprovalModeValue {
  return typeof value === "string" && (APPROVAL_MODES as readonly string[]).includes(value);
}

export class ApprovalMode {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  get(): ApprovalModeValue {
    const row = statement(this.#db, "SELECT value FROM settings WHERE key = ?").get(SETTINGS_KEY) as
      | { value: string }
      | undefined;
    if (!row) return DEFAULT_APPROVAL_MODE;
    try {
      const value: unknown = JSON.parse(row.value);
      return isApprovalMode(value) ? value : DEFAULT_APPROVAL_MODE;
    } catch {
      return DEFAULT_APPROVAL_MODE;
    }
  }

  set(mode: string): ApprovalModeValue {
    if (!isApprovalMode(mode)) {
      throw new AppError("invalid_request", `mode: ${APPROVAL_MODES.join(" or ")} (got "${mode}")`, { field: "mode" });
    }
    statement(
      this.#db,
      "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
    ).run(SETTINGS_KEY, JSON.stringify(mode), new Date().toISOString());
    return mode;
  }
}
