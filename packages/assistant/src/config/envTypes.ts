import { accessSync, constants, statSync } from "node:fs";
import { resolve } from "node:path";

// The kinds of value an environment variable can hold (envVariables.ts). Each kind parses a trimmed, non-empty
// text and says what it allows in words: the same words go into the error for a bad value, `assistant config env
// list` and the tables of docs/configuration.md, so what is documented is what is checked.

export interface EnvType<T> {
  /** Short name of the kind: integer, number, flag, choice, url, path, directory, text, list, secret. */
  kind: string;
  /** What is allowed, completing "must be ...": "a whole number from 0 to 65535". */
  allowed: string;
  /** The value, or throws EnvValueError when the text is not allowed. */
  parse(text: string): T;
  /** How a value is written (defaults in the docs, `config env list`). */
  show(value: T): string;
  /** Whether an error may quote the bad text (not for URLs, which can carry a token). */
  quote: boolean;
}

/** A value outside what its variable allows; `detail` says more than `allowed` when there is more to say. */
export class EnvValueError extends Error {
  readonly detail: string | undefined;
  constructor(detail?: string) {
    super(detail ?? "invalid value");
    this.detail = detail;
  }
}

function kind<T>(
  name: string,
  allowed: string,
  parse: (text: string) => T,
  show: (value: T) => string = String,
  quote = true,
): EnvType<T> {
  return { kind: name, allowed, parse, show, quote };
}

const NUMBER = /^[+]?(\d+\.?\d*|\.\d+)(e[+]?\d+)?$/i;

function range(min: number, max: number, unit: string): string {
  const of = unit ? ` of ${unit}` : "";
  if (max >= Number.MAX_SAFE_INTEGER) return `a whole number${of} of at least ${min}`;
  return `a whole number${of} from ${min} to ${max}`;
}

/** A whole number in [min, max]; `1e10` is accepted (plugin fuel is written that way). */
export function integer(min: number, max = Number.MAX_SAFE_INTEGER, unit = ""): EnvType<number> {
  return kind("integer", range(min, max, unit), (text) => {
    const value = Number(text);
    if (!NUMBER.test(text) || !Number.isSafeInteger(value) || value < min || value > max) throw new EnvValueError();
    return value;
  });
}

/** A number above `above` (when given) or at least `min`, at most `max`; seconds may be fractional. */
export function decimal(options: { above?: number; min?: number; max?: number; unit?: string }): EnvType<number> {
  const { above, min, max, unit } = options;
  const lower = above !== undefined ? `greater than ${above}` : `from ${min ?? 0}`;
  const upper = max === undefined ? "" : above !== undefined ? `, at most ${max}` : ` to ${max}`;
  const allowed = `a number${unit ? ` of ${unit}` : ""} ${lower}${upper}`;
  return kind("number", allowed, (text) => {
    const value = Number(text);
    const low = above !== undefined ? value > above : value >= (min ?? 0);
    if (!NUMBER.test(text) || !Number.isFinite(value) || !low || (max !== undefined && value > max))
      throw new EnvValueError();
    return value;
  });
}

/** `1` on, `0` off. */
export function flag(): EnvType<boolean> {
  return kind(
    "flag",
    "1 or 0",
    (text) => {
      if (text === "1") return true;
      if (text === "0") return false;
      throw new EnvValueError();
    },
    (value) => (value ? "1" : "0"),
  );
}

/** One of a fixed list of words, case-insensitive. */
export function choice<const V extends string>(values: readonly V[]): EnvType<V> {
  const allowed = values.length === 2 ? `${values[0]} or ${values[1]}` : `one of ${values.join(", ")}`;
  return kind("choice", allowed, (text) => {
    const found = values.find((v) => v === text.toLowerCase());
    if (found === undefined) throw new EnvValueError();
    return found;
  });
}

/** An absolute URL with one of `schemes`; kept as written. */
export function url(schemes: readonly string[] = ["http", "https"]): EnvType<string> {
  const allowed = `an ${schemes.join(" or ")} URL`;
  return kind(
    "url",
    allowed,
    (text) => {
      let parsed: URL;
      try {
        parsed = new URL(text);
      } catch {
        throw new EnvValueError("this is not a URL");
      }
      if (!schemes.includes(parsed.protocol.slice(0, -1))) throw new EnvValueError(`not ${parsed.protocol}`);
      return text;
    },
    String,
    false,
  );
}

/** A file or folder path, as written (existence is checked by whoever uses it, and reported there). */
export function path(): EnvType<string> {
  return kind("path", "a path", (text) => text);
}

/** A folder that exists and can be read, as an absolute path. */
export function directory(): EnvType<string> {
  return kind("directory", "an existing folder this user can read", (text) => {
    const absolute = resolve(text);
    try {
      if (!statSync(absolute).isDirectory()) throw new EnvValueError(`${absolute} is not a folder`);
      accessSync(absolute, constants.R_OK | constants.X_OK);
    } catch (error) {
      if (error instanceof EnvValueError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      throw new EnvValueError(code === "ENOENT" ? `${absolute} does not exist` : `${absolute} cannot be read`);
    }
    return absolute;
  });
}

/** Any text. */
export function text(): EnvType<string> {
  return kind("text", "any text", (value) => value);
}

const HOST = /^([a-z0-9.-]+|\[[0-9a-f:.]+\])(:\d{1,5})?$/;
const IPV4 = /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** An IPv4 or IPv6 address. Not node:net's isIP: loading node:net costs every CLI command about 3 ms. */
function isIpAddress(text: string): boolean {
  if (IPV4.test(text)) return true;
  if (!text.includes(":")) return false;
  try {
    return new URL(`http://[${text}]/`).hostname !== "";
  } catch {
    return false;
  }
}

/** Comma-separated host names (a port may follow), lowercased. */
export function hostList(): EnvType<string[]> {
  return kind(
    "list",
    "host names separated by commas",
    (value) => {
      const hosts = value
        .split(",")
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean);
      const bad = hosts.find((h) => !HOST.test(h) && !isIpAddress(h));
      if (bad !== undefined) throw new EnvValueError(`"${bad}" is not a host name`);
      return hosts;
    },
    (hosts) => hosts.join(","),
  );
}

/** An IP address of this machine to listen on, or `localhost`. */
export function listenAddress(): EnvType<string> {
  return kind("address", "an IP address such as 127.0.0.1 or 0.0.0.0", (value) => {
    if (!isIpAddress(value) && value !== "localhost") throw new EnvValueError();
    return value;
  });
}

/** A secret: documented here, read by its owner (the vault, a provider key lookup), never shown or parsed. */
export function secret(): EnvType<never> {
  return kind(
    "secret",
    "a secret (better kept in the vault)",
    () => {
      throw new EnvValueError("secrets are not parsed as settings");
    },
    () => "********",
    false,
  );
}

/** A text matched by `pattern`, normalised by `normalise`; `allowed` says it in words. */
export function pattern(
  allowed: string,
  test: RegExp,
  normalise: (text: string) => string = (t) => t,
): EnvType<string> {
  return kind("text", allowed, (value) => {
    if (!test.test(value)) throw new EnvValueError();
    return normalise(value);
  });
}

/** A kind of its own, for values with a shape of their own (the memory embedder, a model mirror URL). */
export function custom<T>(
  name: string,
  allowed: string,
  parse: (text: string) => T,
  show: (value: T) => string,
  quote = true,
): EnvType<T> {
  return kind(name, allowed, parse, show, quote);
}
