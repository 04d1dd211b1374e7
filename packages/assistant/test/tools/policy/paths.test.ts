import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { pathWithin, resolvePolicyPath, resolveRequestPath } from "../../../src/tools/policy/paths.ts";
import { engineFor } from "./helpers.ts";

// Real files in a temp directory: symlinks and hard links pointing out of the allowed directory.
const root = realpathSync(mkdtempSync(join(tmpdir(), "assistant-policy-paths-")));
const A = join(root, "allowed");
const work = join(root, "work");
for (const dir of [A, join(A, "sub"), join(root, "allowed-evil"), join(root, "outside"), work]) mkdirSync(dir);
writeFileSync(join(A, "a.txt"), "a");
writeFileSync(join(root, "outside", "secret.txt"), "s");
writeFileSync(join(root, "outside", "hl.txt"), "h");
linkSync(join(root, "outside", "hl.txt"), join(A, "hard.txt"));
symlinkSync(join(root, "outside"), join(A, "link-out"));
symlinkSync(join(root, "outside", "secret.txt"), join(A, "file-link"));
symlinkSync(join(root, "outside", "not-yet.txt"), join(A, "dangling"));
symlinkSync("../outside", join(A, "rel-link"));
symlinkSync(join(A, "sub"), join(A, "inner-link")); // stays inside: allowed
symlinkSync(A, join(work, "to-allowed")); // a link from outside into the allowed dir

afterAll(() => rmSync(root, { recursive: true, force: true }));

const engine = engineFor({ allowed_read_paths: [A], allowed_write_paths: [A], require_approval: [] }, { cwd: work });

type Outcome = "allow" | "deny" | "refused";

function read(input: string): Outcome {
  const resolved = resolveRequestPath(input, { cwd: work });
  if ("error" in resolved) return "refused";
  return engine.decide({ kind: "read", tool: "read_file", path: resolved.path }).effect === "allow" ? "allow" : "deny";
}

function write(input: string): Outcome {
  const resolved = resolveRequestPath(input, { cwd: work, forWrite: true });
  if ("error" in resolved) return "refused";
  return engine.decide({ kind: "write", tool: "write_file", path: resolved.path }).effect === "allow"
    ? "allow"
    : "deny";
}

describe("read paths: traversal, lookalikes and literal names", () => {
  it.each<[string, string, Outcome]>([
    ["file in the allowed dir", `${A}/a.txt`, "allow"],
    ["the allowed dir itself", A, "allow"],
    ["trailing slash", `${A}/`, "allow"],
    ["double slash and dot segment", `${A}//./a.txt`, "allow"],
    ["relative from cwd into allowed", "../allowed/a.txt", "allow"],
    ["new file in a subdirectory", `${A}/sub/new/deeper.txt`, "allow"],
    ["dot-dot out of allowed", `${A}/../outside/secret.txt`, "deny"],
    ["dot-dot inside then out", `${A}/sub/../../outside/secret.txt`, "deny"],
    ["dot-dot to a lookalike sibling", `${A}/../allowed-evil/x`, "deny"],
    ["prefix lookalike", `${root}/allowed-evil/x`, "deny"],
    ["prefix lookalike without separator", `${A}x/y`, "deny"],
    ["relative path outside", "../outside/secret.txt", "deny"],
    ["many dot-dots to /etc/passwd", "../../../../../../../../etc/passwd", "deny"],
    ["absolute /etc/passwd", "/etc/passwd", "deny"],
    ["allowed/../etc/passwd", `${A}/../../../../../../etc/passwd`, "deny"],
    ["url-encoded dot-dot is just a name", `${A}/%2e%2e/%2e%2e/outside`, "allow"],
    ["encoded slash is just a name", `${A}/..%2f..%2foutside`, "allow"],
    ["encoded traversal at the root is outside", `${root}/%2e%2e/allowed`, "deny"],
    ["backslash dot-dot is a name on posix", `${A}/..\\..\\outside`, "allow"],
    ["cwd itself is not allowed", ".", "deny"],
    ["empty path", "", "refused"],
    ["NUL byte", `${A}/a.txt\0/../../etc/passwd`, "refused"],
    ["NUL byte alone", "\0", "refused"],
  ])("%s", (_name, input, expected) => {
    expect(read(input)).toBe(expected);
  });
});

describe("read paths: symlinks", () => {
  it.each<[string, string, Outcome]>([
    ["symlinked dir pointing outside", `${A}/link-out/secret.txt`, "deny"],
    ["the symlink itself", `${A}/link-out`, "deny"],
    ["symlinked file pointing outside", `${A}/file-link`, "deny"],
    ["relative symlink pointing outside", `${A}/rel-link/secret.txt`, "deny"],
    ["new file under a symlinked dir", `${A}/link-out/new.txt`, "deny"],
    ["new nested file under a symlinked dir", `${A}/link-out/a/b/c.txt`, "deny"],
    ["dangling symlink", `${A}/dangling`, "refused"],
    ["symlink staying inside", `${A}/inner-link/x.txt`, "allow"],
    ["symlink from outside into allowed", `${work}/to-allowed/a.txt`, "allow"],
    ["relative symlink from cwd into allowed", "to-allowed/a.txt", "allow"],
  ])("%s", (_name, input, expected) => {
    expect(read(input)).toBe(expected);
  });

  it("resolves a new file through its symlinked parent", () => {
    expect(resolveRequestPath(`${A}/link-out/new.txt`, { cwd: work })).toEqual({
      path: join(root, "outside", "new.txt"),
    });
  });
});

describe("write paths", () => {
  it.each<[string, string, Outcome]>([
    ["new file in allowed", `${A}/new.txt`, "allow"],
    ["existing single-link file", `${A}/a.txt`, "allow"],
    ["hard link to a file outside", `${A}/hard.txt`, "refused"],
    ["new file under a symlinked dir", `${A}/link-out/new.txt`, "deny"],
    ["symlinked file pointing outside", `${A}/file-link`, "deny"],
    ["dangling symlink would create its target", `${A}/dangling`, "refused"],
    ["dot-dot out", `${A}/../outside/x`, "deny"],
    ["lookalike sibling", `${root}/allowed-evil/x`, "deny"],
  ])("%s", (_name, input, expected) => {
    expect(write(input)).toBe(expected);
  });

  it("hard links are only refused for writes", () => {
    expect(read(`${A}/hard.txt`)).toBe("allow");
    expect(resolveRequestPath(`${A}/hard.txt`, { cwd: work, forWrite: true })).toEqual({
      error: expect.stringContaining("hard links"),
    });
  });
});

describe("no expansion: ~, $HOME, %USERPROFILE% are literal names", () => {
  it.each<[string, string]>([
    ["~", join(work, "~")],
    ["~/notes", join(work, "~", "notes")],
    ["~root/.ssh", join(work, "~root", ".ssh")],
    ["$HOME/x", join(work, "$HOME", "x")],
    ["$" + "{HOME}/x", join(work, "$" + "{HOME}", "x")], // split so it is not read as a template
    ["%USERPROFILE%\\x", join(work, "%USERPROFILE%\\x")],
    ["$(pwd)/x", join(work, "$(pwd)", "x")],
  ])("%s stays literal", (input, expected) => {
    expect(resolveRequestPath(input, { cwd: work })).toEqual({ path: expected });
    expect(read(input)).toBe("deny");
  });
});

describe("case and Unicode", () => {
  it.each<[string, string, boolean, Outcome]>([
    ["different case on a case-sensitive fs", `${root}/Allowed/a.txt`, false, "deny"],
    ["upper-case prefix on a case-sensitive fs", `${root}/ALLOWED`, false, "deny"],
    ["different case where the fs ignores case", `${root}/Allowed/a.txt`, true, "allow"],
    ["lookalike stays denied ignoring case", `${root}/ALLOWED-evil/x`, true, "deny"],
  ])("%s", (_name, input, caseInsensitive, expected) => {
    const e = engineFor({ allowed_read_paths: [A], require_approval: [] }, { cwd: work, caseInsensitive });
    const resolved = resolveRequestPath(input, { cwd: work });
    if ("error" in resolved) throw new Error(resolved.error);
    const effect = e.decide({ kind: "read", tool: "read_file", path: resolved.path }).effect;
    expect(effect === "allow" ? "allow" : "deny").toBe(expected);
  });

  const nfc = join(root, "caf\u00e9");
  const nfd = join(root, "cafe\u0301");
  it.each<[string, string, string, Outcome]>([
    ["NFD request, NFC policy", nfc, `${nfd}/x`, "allow"],
    ["NFC request, NFD policy", nfd, `${nfc}/x`, "allow"],
    ["NFD lookalike sibling", nfc, `${nfd}-evil/x`, "deny"],
    ["fullwidth solidus is not a separator", A, `${root}/allowed\uff0f..\uff0foutside/secret.txt`, "deny"],
    ["fullwidth solidus inside allowed is a name", A, `${A}/x\uff0f..\uff0f..`, "allow"],
    ["RTL override inside allowed is a name", A, `${A}/\u202etxt.exe`, "allow"],
    ["RTL override spelling the dir backwards", A, `${root}/\u202edewolla/a.txt`, "deny"],
    ["zero-width joiner in the dir name", A, `${root}/allo\u200dwed/a.txt`, "deny"],
    ["Cyrillic a in the dir name", A, `${root}/\u0430llowed/a.txt`, "deny"],
  ])("%s", (_name, allowed, input, expected) => {
    const e = engineFor({ allowed_read_paths: [allowed], require_approval: [] }, { cwd: work });
    const resolved = resolveRequestPath(input, { cwd: work });
    if ("error" in resolved) throw new Error(resolved.error);
    const effect = e.decide({ kind: "read", tool: "read_file", path: resolved.path }).effect;
    expect(effect === "allow" ? "allow" : "deny").toBe(expected);
  });
});

describe("`.` in policy lists is the daemon's working directory", () => {
  const e = engineFor({ allowed_read_paths: ["."], require_approval: [] }, { cwd: work });
  it.each<[string, Outcome]>([
    [`${work}/file.txt`, "allow"],
    [work, "allow"],
    [`${work}-evil/file.txt`, "deny"],
    [`${root}/file.txt`, "deny"],
    [`${A}/a.txt`, "deny"],
  ])("%s", (path, expected) => {
    const effect = e.decide({ kind: "read", tool: "read_file", path }).effect;
    expect(effect === "allow" ? "allow" : "deny").toBe(expected);
  });

  it("names the entry as written and resolves it once", () => {
    expect(e.decide({ kind: "read", tool: "read_file", path: `${work}/f` }).rule).toBe("allowed_read_paths: .");
    expect(resolvePolicyPath(".", work)).toBe(work);
    expect(resolvePolicyPath("../allowed", work)).toBe(A);
    expect(resolvePolicyPath(`${A}/link-out`, work)).toBe(join(root, "outside"));
  });

  it("denies a request path that was not resolved first", () => {
    const d = e.decide({ kind: "read", tool: "read_file", path: "file.txt" });
    expect(d).toEqual({ effect: "deny", rule: "default: path file.txt is not resolved", source: "built-in default" });
  });
});

describe("pathWithin matches whole segments", () => {
  it.each<[string, string, boolean, boolean]>([
    ["/x/allowed/a", "/x/allowed", false, true],
    ["/x/allowed", "/x/allowed", false, true],
    ["/x/allowed-evil", "/x/allowed", false, false],
    ["/x/allowedx/a", "/x/allowed", false, false],
    ["/x", "/x/allowed", false, false],
    ["/x/ALLOWED/a", "/x/allowed", false, false],
    ["/x/ALLOWED/a", "/x/allowed", true, true],
    ["/x/ALLOWED-evil", "/x/allowed", true, false],
    ["/anything/at/all", "/", false, true],
  ])("%s within %s (ignore case %s) = %s", (path, prefix, ci, expected) => {
    expect(pathWithin(path, prefix, ci)).toBe(expected);
  });
});
