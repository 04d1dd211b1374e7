import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { writeFileAtomic } from "../util/atomicWrite.ts";
import { AppError } from "../util/errors.ts";

const TOKEN = /^[0-9a-f]{64}$/;

/** The API token (32 random bytes, hex) in `auth_token`, mode 0600, created at the daemon's first start. */
export function ensureAuthToken(file: string): string {
  if (existsSync(file)) return readAuthToken(file);
  const token = randomBytes(32).toString("hex");
  writeFileAtomic(file, `${token}\n`, 0o600);
  return token;
}

export function readAuthToken(file: string): string {
  if (!existsSync(file)) {
    throw new AppError(
      "unauthorized",
      `no API token at ${file}: start the daemon once (\`assistant start\`) to create it`,
    );
  }
  const token = readFileSync(file, "utf8").trim();
  if (!TOKEN.test(token)) {
    throw new AppError("unauthorized", `${file} does not hold a valid API token; delete it and restart the daemon`);
  }
  return token;
}

/** Constant-time equality of two secrets of any length (hashing first equalises the lengths). */
export function secretsEqual(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a).digest();
  const hb = createHash("sha256").update(b).digest();
  return timingSafeEqual(ha, hb);
}

export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}
