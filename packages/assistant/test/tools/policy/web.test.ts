import { describe, expect, it } from "vitest";
import type { Effect } from "../../../src/tools/policy/types.ts";
import { type AddressClass, classifyAddress, normaliseHost } from "../../../src/tools/policy/web.ts";
import { engineFor, POLICY_FILE } from "./helpers.ts";

function fetchWith(e: ReturnType<typeof engineFor>, url: string) {
  return e.decide({ kind: "web", tool: "web_fetch", url: new URL(url) });
}

describe("allowed_web_domains with named domains", () => {
  const e = engineFor({
    allowed_web_domains: ["example.com", "127.0.0.1", "Docs.Service.TEST."],
    blocked_web_domains: ["bad.example.com"],
    require_approval: [],
  });

  it.each<[string, Effect, string]>([
    ["https://example.com/", "allow", "allowed_web_domains: example.com"],
    ["https://a.example.com/x", "allow", "allowed_web_domains: example.com"],
    ["https://a.b.example.com/", "allow", "allowed_web_domains: example.com"],
    ["https://EXAMPLE.com./", "allow", "allowed_web_domains: example.com"],
    ["http://example.com:8080/path?q=1#f", "allow", "allowed_web_domains: example.com"],
    ["https://\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com/", "allow", "allowed_web_domains: example.com"],
    ["https://docs.service.test/", "allow", "allowed_web_domains: docs.service.test"],
    ["http://127.0.0.1:8080/", "allow", "allowed_web_domains: 127.0.0.1"],
    ["http://2130706433/", "allow", "allowed_web_domains: 127.0.0.1"],
    ["https://example.com.evil.test/", "deny", "allowed_web_domains does not list example.com.evil.test"],
    ["https://evil-example.com/", "deny", "allowed_web_domains does not list evil-example.com"],
    ["https://exampIe.com/", "deny", "allowed_web_domains does not list exampie.com"],
    ["https://ex\u0430mple.com/", "deny", "allowed_web_domains does not list xn--exmple-4nf.com"],
    ["https://xn--exmple-4nf.com/", "deny", "allowed_web_domains does not list xn--exmple-4nf.com"],
    ["https://xn--example-.com/", "deny", "allowed_web_domains does not list"],
    ["http://example.com@evil.test/", "deny", "allowed_web_domains does not list evil.test"],
    ["http://example.com:pw@evil.test/", "deny", "allowed_web_domains does not list evil.test"],
    ["http://evil.test/?u=https://example.com", "deny", "allowed_web_domains does not list evil.test"],
    ["http://evil.test#@example.com", "deny", "allowed_web_domains does not list evil.test"],
    ["http://evil.test\\@example.com/", "deny", "allowed_web_domains does not list evil.test"],
    ["https://notexample.com/", "deny", "allowed_web_domains does not list notexample.com"],
    ["https://example.co/", "deny", "allowed_web_domains does not list example.co"],
    ["https://com/", "deny", "allowed_web_domains does not list com"],
    ["https://service.test/", "deny", "allowed_web_domains does not list service.test"],
    ["https://bad.example.com/", "deny", "blocked_web_domains: bad.example.com"],
    ["https://x.bad.example.com/", "deny", "blocked_web_domains: bad.example.com"],
    ["https://BAD.example.com./", "deny", "blocked_web_domains: bad.example.com"],
    ["http://127.0.0.2/", "deny", "does not list the loopback host 127.0.0.2"],
    ["http://[::1]/", "deny", "does not list the loopback host [::1]"],
    ["http://localhost/", "deny", "does not list the loopback host localhost"],
    ["http://169.254.169.254/latest/meta-data/", "deny", "does not list the link-local host 169.254.169.254"],
    ["file:///etc/passwd", "deny", "default: scheme file: is not allowed (http and https only)"],
    ["ftp://example.com/", "deny", "default: scheme ftp: is not allowed (http and https only)"],
    ["gopher://example.com/", "deny", "default: scheme gopher: is not allowed (http and https only)"],
    ["data:text/plain,example.com", "deny", "default: scheme data: is not allowed (http and https only)"],
    ["javascript:alert(1)//example.com", "deny", "default: scheme javascript: is not allowed (http and https only)"],
    ["ws://example.com/", "deny", "default: scheme ws: is not allowed (http and https only)"],
    ["blob:https://example.com/x", "deny", "default: scheme blob: is not allowed (http and https only)"],
  ])("%s -> %s", (url, effect, rule) => {
    const d = fetchWith(e, url);
    expect(d.effect).toBe(effect);
    expect(d.rule).toContain(rule);
  });
});

describe("allowed_web_domains [*] allows public hosts only", () => {
  const e = engineFor({ allowed_web_domains: ["*"], blocked_web_domains: ["blocked.test"], require_approval: [] });

  it.each([
    "http://127.0.0.1/",
    "http://2130706433/",
    "http://0177.0.0.1/",
    "http://0x7f.0.0.1/",
    "http://0x7f000001/",
    "http://017700000001/",
    "http://127.1/",
    "http://127.0.0.1./",
    "http://[::1]/",
    "http://[0:0:0:0:0:0:0:1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:7f00:1::]/",
    "http://localhost/",
    "http://LOCALHOST./",
    "http://api.localhost/",
    "http://169.254.169.254/",
    "http://[::ffff:169.254.169.254]/",
    "http://[fe80::1]/",
    "http://[::]/",
    "http://0.0.0.0/",
    "http://0/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://172.31.255.255/",
    "http://192.168.1.1/",
    "http://[::ffff:10.0.0.1]/",
    "http://[fc00::1]/",
    "http://[fd12:3456::1]/",
    "http://100.64.0.1/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
  ])("%s is refused", (url) => {
    const d = fetchWith(e, url);
    expect(d).toMatchObject({ effect: "deny", source: POLICY_FILE });
    expect(d.rule).toMatch(/^allowed_web_domains does not list the [a-z-]+ host .* \* covers public hosts only\)$/);
  });

  it.each<[string, Effect, string]>([
    ["https://anything.test/", "allow", "allowed_web_domains: *"],
    ["http://8.8.8.8/", "allow", "allowed_web_domains: *"],
    ["http://172.32.0.1/", "allow", "allowed_web_domains: *"],
    ["http://100.128.0.1/", "allow", "allowed_web_domains: *"],
    ["http://[2606:4700::1111]/", "allow", "allowed_web_domains: *"],
    ["https://blocked.test/", "deny", "blocked_web_domains: blocked.test"],
    ["https://a.blocked.test/", "deny", "blocked_web_domains: blocked.test"],
  ])("%s -> %s", (url, effect, rule) => {
    expect(fetchWith(e, url)).toMatchObject({ effect, rule });
  });

  it("a listed loopback host is allowed exactly, and only that host", () => {
    const listed = engineFor({ allowed_web_domains: ["*", "127.0.0.1", "::1"], require_approval: [] });
    expect(fetchWith(listed, "http://127.0.0.1:11434/")).toMatchObject({
      effect: "allow",
      rule: "allowed_web_domains: 127.0.0.1",
    });
    expect(fetchWith(listed, "http://127.1/").effect).toBe("allow");
    expect(fetchWith(listed, "http://[::1]/")).toMatchObject({ effect: "allow", rule: "allowed_web_domains: [::1]" });
    expect(fetchWith(listed, "http://127.0.0.2/").effect).toBe("deny");
    expect(fetchWith(listed, "http://localhost/").effect).toBe("deny");
    expect(fetchWith(listed, "http://10.0.0.1/").effect).toBe("deny");
  });

  it("a listed parent domain never covers a private IP or localhost name", () => {
    const e2 = engineFor({ allowed_web_domains: ["localhost", "0.0.1"], require_approval: [] });
    expect(fetchWith(e2, "http://localhost/").effect).toBe("allow");
    expect(fetchWith(e2, "http://api.localhost/").effect).toBe("deny");
    expect(fetchWith(e2, "http://10.0.0.1/").effect).toBe("deny");
  });

  it("blocked wins over allowed", () => {
    const both = engineFor({
      allowed_web_domains: ["example.com", "*"],
      blocked_web_domains: ["example.com"],
      require_approval: [],
    });
    expect(fetchWith(both, "https://example.com/")).toMatchObject({
      effect: "deny",
      rule: "blocked_web_domains: example.com",
    });
    const all = engineFor({ allowed_web_domains: ["example.com"], blocked_web_domains: ["*"], require_approval: [] });
    expect(fetchWith(all, "https://example.com/")).toMatchObject({ effect: "deny", rule: "blocked_web_domains: *" });
  });
});

describe("classifyAddress (for resolved addresses and redirects)", () => {
  it.each<[string, AddressClass]>([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["::1", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.5.4", "private"],
    ["192.168.0.1", "private"],
    ["fc00::1", "private"],
    ["fdff:ffff::1", "private"],
    ["169.254.169.254", "link_local"],
    ["fe80::1%eth0", "link_local"],
    ["febf::1", "link_local"],
    ["64:ff9b::a9fe:a9fe", "link_local"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.255", "cgnat"],
    ["224.0.0.251", "multicast"],
    ["ff02::1", "multicast"],
    ["255.255.255.255", "reserved"],
    ["not-an-ip", "reserved"],
    ["8.8.8.8", "public"],
    ["172.32.0.1", "public"],
    ["100.128.0.1", "public"],
    ["::ffff:8.8.8.8", "public"],
    ["2606:4700::1111", "public"],
  ])("%s is %s", (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it.each<[string, string | null]>([
    ["Example.COM.", "example.com"],
    ["127.1", "127.0.0.1"],
    ["::1", "[::1]"],
    ["ex\u0430mple.com", "xn--exmple-4nf.com"],
    ["", null],
    ["a b", null],
    ["[::1]", "[::1]"],
    ["example.com@evil.test", null],
    ["evil.test/example.com", null],
    ["evil.test\\example.com", null],
    ["example.com:80", null],
    ["evil.test#example.com", null],
    ["example.com\0", null],
  ])("normaliseHost(%j) = %j", (host, expected) => {
    expect(normaliseHost(host)).toBe(expected);
  });
});
