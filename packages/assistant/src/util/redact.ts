// Process-wide registry of secret values that must never be written out. The vault registers every value it
// reads or stores; the logger, the event store and error serialisation pass text through `redact`.

const secrets = new Set<string>();
const MIN_LENGTH = 4; // shorter values would redact ordinary words

export function registerSecret(value: string): void {
  if (value.length >= MIN_LENGTH) secrets.add(value);
  // A multi-line secret may be logged line by line.
  for (const line of value.split(/\r?\n/)) if (line.trim().length >= 8) secrets.add(line.trim());
}

export function redact(text: string): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join("[REDACTED]");
  return out.replace(/(Bearer\s+)[A-Za-z0-9._~+/-]{8,}=*/g, "$1[REDACTED]");
}

/** Deep-redacts a JSON-like value (event payloads, log fields). */
export function redactValue<T>(value: T): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map(redactValue) as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactValue(v);
    return out as T;
  }
  return value;
}
