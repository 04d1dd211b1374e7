import { isIPv4, isIPv6 } from "node:net";
import { domainToASCII } from "node:url";

// Host matching for web_fetch, the browser and skill installs. Hosts are compared in one normal form: the
// WHATWG URL parser's (lower case, IDN as punycode, every IPv4 spelling such as 2130706433, 0177.0.0.1,
// 0x7f.1 or 127.1 as dotted decimal, IPv6 compressed in brackets) without a trailing dot. A loopback,
// private or otherwise non-public address is allowed only when that exact host is listed, never through `*`
// or a parent domain (docs/tools.md#web).

export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "link_local"
  | "unspecified"
  | "cgnat"
  | "multicast"
  | "reserved";

/** A compiled host list: `*` plus a set of normalised hosts. */
export interface HostList {
  /** The key in tools_policy.yaml, for naming rules. */
  key: string;
  any: boolean;
  hosts: ReadonlySet<string>;
}

/** Characters that make a string more than a host (userinfo, path, query, fragment, whitespace, NUL). */
const NOT_IN_HOST = /[/\\@?#\s\0]/;

/** Normalises a host as a URL would: `Example.COM.` → `example.com`, `127.1` → `127.0.0.1`, `::1` → `[::1]`. */
export function normaliseHost(host: string): string | null {
  let h = host.trim();
  if (h.length === 0 || NOT_IN_HOST.test(h)) return null;
  if (isIPv6(h)) h = `[${h}]`;
  else if (h.includes(":") && !(h.startsWith("[") && h.endsWith("]") && isIPv6(h.slice(1, -1)))) return null;
  let parsed: string;
  try {
    parsed = new URL(`http://${h}/`).hostname;
  } catch {
    return null;
  }
  // Anything that parsed into something other than a bare host (userinfo, a port, a path) is not a host.
  if (parsed.length === 0) return null;
  if (!parsed.startsWith("[")) {
    while (parsed.endsWith(".")) parsed = parsed.slice(0, -1);
    parsed = domainToASCII(parsed) || parsed;
    // Re-parse after removing the trailing dots, so a name that is now numeric gets the numeric normal form.
    try {
      parsed = new URL(`http://${parsed}/`).hostname;
    } catch {
      return null;
    }
  }
  return parsed.length === 0 ? null : parsed;
}

export function compileHostList(key: string, entries: readonly string[]): HostList {
  const hosts = new Set<string>();
  let any = false;
  for (const entry of entries) {
    if (entry === "*") {
      any = true;
      continue;
    }
    const host = normaliseHost(entry);
    if (host) hosts.add(host);
  }
  return { key, any, hosts };
}

export function isIpHost(host: string): boolean {
  return host.startsWith("[") || isIPv4(host);
}

/** The listed entry that covers `host`: the host itself or a parent domain (never for IP literals). */
export function matchDomain(host: string, hosts: ReadonlySet<string>): string | null {
  if (hosts.has(host)) return host;
  if (isIpHost(host)) return null;
  let dot = host.indexOf(".");
  while (dot >= 0) {
    const parent = host.slice(dot + 1);
    if (hosts.has(parent)) return parent;
    dot = host.indexOf(".", dot + 1);
  }
  return null;
}

/** Class of a normalised host before DNS: IP literals by address, `localhost` names as loopback. */
export function classifyHost(host: string): AddressClass {
  if (host.startsWith("[")) return classifyAddress(host.slice(1, -1));
  if (isIPv4(host)) return classifyAddress(host);
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback";
  return "public";
}

/**
 * Class of one IP address (v4 or v6, without brackets). The fetch tool calls it on every resolved address and
 * every redirect target, so a public name that resolves to 127.0.0.1 or 169.254.169.254 is caught too.
 */
export function classifyAddress(ip: string): AddressClass {
  if (isIPv4(ip)) return classifyV4(v4ToNumber(ip));
  if (isIPv6(ip)) return classifyV6(ip);
  return "reserved"; // not an address: never treat as public
}

function v4ToNumber(ip: string): number {
  const [a = 0, b = 0, c = 0, d = 0] = ip.split(".").map(Number);
  return ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
}

function inV4(n: number, base: number, bits: number): boolean {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (n & mask) >>> 0 === base >>> 0;
}

const V4_RANGES: ReadonlyArray<readonly [number, number, AddressClass]> = [
  [0x00000000, 8, "unspecified"], // 0.0.0.0/8 "this network"
  [0x7f000000, 8, "loopback"],
  [0x0a000000, 8, "private"],
  [0xac100000, 12, "private"],
  [0xc0a80000, 16, "private"],
  [0xa9fe0000, 16, "link_local"], // includes the cloud metadata address 169.254.169.254
  [0x64400000, 10, "cgnat"],
  [0xc0000000, 24, "reserved"], // IETF protocol assignments
  [0xc6120000, 15, "reserved"], // benchmarking
  [0xe0000000, 4, "multicast"],
  [0xf0000000, 4, "reserved"], // incl. 255.255.255.255
];

function classifyV4(n: number): AddressClass {
  for (const [base, bits, cls] of V4_RANGES) if (inV4(n, base, bits)) return cls;
  return "public";
}

/** Parses an IPv6 address into 8 16-bit groups (handles `::` and a dotted IPv4 tail). */
function v6Groups(ip: string): number[] {
  let text = ip.toLowerCase();
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(":");
  const last = text.slice(lastColon + 1);
  if (last.includes(".")) {
    const n = v4ToNumber(last);
    tail.push(n >>> 16, n & 0xffff);
    text = text.slice(0, lastColon + 1);
    if (!text.endsWith("::")) text = text.slice(0, -1);
  }
  const [head = "", rest] = text.split("::");
  const headGroups = head === "" ? [] : head.split(":").map((g) => Number.parseInt(g, 16));
  const restGroups = rest === undefined || rest === "" ? [] : rest.split(":").map((g) => Number.parseInt(g, 16));
  const fill = 8 - headGroups.length - restGroups.length - tail.length;
  return [...headGroups, ...new Array<number>(Math.max(0, fill)).fill(0), ...restGroups, ...tail];
}

function classifyV6(ip: string): AddressClass {
  const g = v6Groups(ip);
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = ((g6 << 16) >>> 0) + g7;
  const upperZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (upperZero && g5 === 0 && g6 === 0 && g7 === 0) return "unspecified";
  if (upperZero && g5 === 0 && g6 === 0 && g7 === 1) return "loopback";
  if (upperZero && (g5 === 0xffff || g5 === 0)) return classifyV4(embedded); // IPv4-mapped, IPv4-compatible
  if (g0 === 0x64 && g1 === 0xff9b) return classifyV4(embedded); // NAT64 64:ff9b::/96 and /48
  if (g0 === 0x2002) return classifyV4(((g1 << 16) >>> 0) + g2); // 6to4 embeds an IPv4 address
  if ((g0 & 0xfe00) === 0xfc00) return "private"; // fc00::/7 unique local
  if ((g0 & 0xffc0) === 0xfe80) return "link_local"; // fe80::/10
  if ((g0 & 0xffc0) === 0xfec0) return "private"; // fec0::/10 deprecated site-local
  if ((g0 & 0xff00) === 0xff00) return "multicast";
  if (g0 === 0x2001 && g1 === 0x0db8) return "reserved"; // documentation
  return "public";
}

export type HostCheck = { ok: true; rule: string } | { ok: false; rule: string };

/**
 * Checks a normalised host against a deny list then an allow list. Deny entries cover subdomains; a public host
 * is allowed by `*` or by itself or a parent domain; a non-public host only by its exact listed form.
 * `exactOnly` restricts public hosts to exact entries too (skill install hosts).
 */
export function checkHost(host: string, allowed: HostList, blocked: HostList | null, exactOnly = false): HostCheck {
  const blockedBy = blocked ? blockedRule(host, blocked) : null;
  return blockedBy !== null ? { ok: false, rule: blockedBy } : allowedRule(host, allowed, exactOnly);
}

/** The deny-list rule that blocks a normalised host (entries cover subdomains; `*` blocks all), or null. */
export function blockedRule(host: string, blocked: HostList): string | null {
  if (blocked.any) return `${blocked.key}: *`;
  const hit = matchDomain(host, blocked.hosts);
  return hit === null ? null : `${blocked.key}: ${hit}`;
}

/** The allow-list half of `checkHost`. */
export function allowedRule(host: string, allowed: HostList, exactOnly = false): HostCheck {
  const cls = classifyHost(host);
  if (cls !== "public") {
    if (allowed.hosts.has(host)) return { ok: true, rule: `${allowed.key}: ${host}` };
    return {
      ok: false,
      rule: `${allowed.key} does not list the ${cls.replace("_", "-")} host ${host} (non-public hosts must be listed exactly; * covers public hosts only)`,
    };
  }
  const hit = exactOnly ? (allowed.hosts.has(host) ? host : null) : matchDomain(host, allowed.hosts);
  if (hit !== null) return { ok: true, rule: `${allowed.key}: ${hit}` };
  if (allowed.any) return { ok: true, rule: `${allowed.key}: *` };
  return { ok: false, rule: `${allowed.key} does not list ${host}` };
}

/** Hostname of a URL in the normal form, or null when the URL is not http(s) or has no usable host. */
export function urlHost(url: URL): string | null {
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  return normaliseHost(url.hostname);
}

/** Checks a URL for web_fetch: http and https only, then `checkHost`. */
export function checkUrl(url: URL, allowed: HostList, blocked: HostList | null): HostCheck {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, rule: `scheme ${url.protocol} is not allowed (http and https only)` };
  }
  const host = normaliseHost(url.hostname);
  if (!host) return { ok: false, rule: `URL has no valid host` };
  return checkHost(host, allowed, blocked);
}
