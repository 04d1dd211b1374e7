import { randomBytes } from "node:crypto";
import { secretsEqual } from "./authToken.ts";

export const LOGIN_CODE_TTL_SECS = 120;

/**
 * One-time login codes for the web UI (docs/http-api.md#browser-login): the long-lived token never travels in a URL.
 * A code is valid 120 s and usable once; codes live in memory only, so a restart voids them.
 */
export class LoginCodes {
  readonly #codes = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  issue(): { code: string; expiresIn: number } {
    this.#prune();
    const code = randomBytes(24).toString("base64url");
    this.#codes.set(code, this.#now() + LOGIN_CODE_TTL_SECS * 1000);
    return { code, expiresIn: LOGIN_CODE_TTL_SECS };
  }

  /** True once for a valid, unexpired code; the code is spent whatever the outcome. */
  consume(code: string): boolean {
    this.#prune();
    for (const [candidate, expires] of this.#codes) {
      if (secretsEqual(candidate, code)) {
        this.#codes.delete(candidate);
        return expires > this.#now();
      }
    }
    return false;
  }

  #prune(): void {
    const now = this.#now();
    for (const [code, expires] of this.#codes) if (expires <= now) this.#codes.delete(code);
  }
}
