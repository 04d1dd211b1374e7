import { randomBytes } from "node:crypto";
import type { Db } from "../store/database.ts";
import { sha256Hex } from "./authToken.ts";

const SESSION_DAYS = 30;

/**
 * Browser sessions behind the `assistant_session` cookie. Only a hash of the cookie value is stored, so a copy of
 * the database does not let anyone in; lookups are by hash, which is constant-time with respect to the secret.
 */
export class WebSessions {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  create(): { value: string; maxAgeSecs: number } {
    const value = randomBytes(32).toString("base64url");
    const now = new Date();
    const expires = new Date(now.getTime() + SESSION_DAYS * 86_400_000);
    this.#db
      .prepare("INSERT INTO web_sessions (token_hash, created_at, expires_at) VALUES (?, ?, ?)")
      .run(sha256Hex(value), now.toISOString(), expires.toISOString());
    return { value, maxAgeSecs: SESSION_DAYS * 86_400 };
  }

  isValid(value: string): boolean {
    const row = this.#db.prepare("SELECT expires_at FROM web_sessions WHERE token_hash = ?").get(sha256Hex(value)) as
      | { expires_at: string }
      | undefined;
    return row !== undefined && row.expires_at > new Date().toISOString();
  }

  pruneExpired(): void {
    this.#db.prepare("DELETE FROM web_sessions WHERE expires_at <= ?").run(new Date().toISOString());
  }
}
