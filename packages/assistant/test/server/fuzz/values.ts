import type { Random } from "./random.ts";

// Values for fuzz bodies and parameters, from the JSON Schemas of /api/openapi.json: plausible ones (so requests
// get past validation into the handlers and writers) and hostile ones (wrong types, extreme numbers, deep nesting).

/** The part of JSON Schema (as zod emits it) the generator reads. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

/** JSON text inserted verbatim by `toJson`: numbers JSON.stringify cannot write (1e400) and pre-built nesting. */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** JSON.stringify that writes RawJson values verbatim. */
export function toJson(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}:${toJson(item)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

// Strings that have broken parsers and path handling elsewhere; none names a real command, host or file.
const STRINGS = [
  "",
  "a",
  "fuzz",
  "conversation",
  "x".repeat(300),
  "päss wörd ✓ 🙂",
  "../../../../etc/passwd",
  "%ff%00",
  "\u0000\u0007\u001b[31m",
  "__proto__",
  "null",
  "-1",
  "1e999",
  "2026-02-30T25:61:00Z",
  "https://fuzz.invalid/x",
  "vault://fuzz",
  "/tmp/fuzz-does-not-exist",
  "*",
  "' OR 1=1 --",
  "{{7*7}}",
];

export const HUGE_NUMBERS = [
  new RawJson("1e400"),
  new RawJson("-1e400"),
  new RawJson("123456789012345678901234567890"),
  new RawJson("9007199254740993"),
  new RawJson("-0"),
  new RawJson("4.9e-324"),
  1e308,
  -1e308,
  2 ** 31,
  -(2 ** 63),
];

function variants(schema: JsonSchema): JsonSchema[] {
  return schema.anyOf ?? schema.oneOf ?? [schema];
}

function typeOf(schema: JsonSchema): string | undefined {
  return Array.isArray(schema.type) ? schema.type[0] : schema.type;
}

/** A value the schema probably accepts (patterns and refinements are not modelled, so not always). */
export function plausibleValue(schema: JsonSchema, random: Random, depth = 0): unknown {
  const choice = random.pick(variants(schema));
  if (choice.const !== undefined) return choice.const;
  if (choice.enum) return random.pick(choice.enum);
  switch (typeOf(choice)) {
    case "object": {
      const value: Record<string, unknown> = {};
      for (const [name, property] of Object.entries(choice.properties ?? {})) {
        if ((choice.required ?? []).includes(name) || random.chance(0.5)) {
          value[name] = plausibleValue(property, random, depth + 1);
        }
      }
      return value;
    }
    case "array": {
      const count = depth > 3 ? 0 : random.int(choice.minItems ?? 0, Math.min(choice.maxItems ?? 3, 3));
      return Array.from({ length: count }, () => plausibleValue(choice.items ?? {}, random, depth + 1));
    }
    case "integer":
    case "number": {
      const min = choice.minimum ?? 0;
      const max = choice.maximum ?? min + 1000;
      return random.int(Math.ceil(min), Math.floor(Math.min(max, min + 1_000_000)));
    }
    case "boolean":
      return random.chance(0.5);
    case "null":
      return null;
    case "string": {
      const text = random.pick(STRINGS);
      return choice.minLength && text.length < choice.minLength ? text.padEnd(choice.minLength, "x") : text;
    }
    default:
      return random.pick(STRINGS);
  }
}

/** A value of another JSON type than the schema's. */
export function wrongValue(schema: JsonSchema, random: Random): unknown {
  const candidates: unknown[] = [7, "seven", true, null, [1, "2"], { nested: { value: 1 } }, ...HUGE_NUMBERS];
  const type = typeOf(variants(schema)[0]!);
  const kinds: Record<string, (v: unknown) => boolean> = {
    string: (v) => typeof v === "string",
    number: (v) => typeof v === "number" || v instanceof RawJson,
    integer: (v) => typeof v === "number" || v instanceof RawJson,
    boolean: (v) => typeof v === "boolean",
    array: Array.isArray,
    object: (v) => v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof RawJson),
  };
  const same = type ? kinds[type] : undefined;
  return random.pick(same ? candidates.filter((v) => !same(v)) : candidates);
}

/** JSON text nested `depth` levels deep (built as text: the client would overflow its own stack otherwise). */
export function deepJson(depth: number, random: Random): RawJson {
  return random.chance(0.5)
    ? new RawJson(`${"[".repeat(depth)}1${"]".repeat(depth)}`)
    : new RawJson(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`);
}
