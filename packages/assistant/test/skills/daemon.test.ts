import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scriptedRouterYaml, startScriptedDaemon } from "../agent/helpers.ts";
import { api as apiCall, type TestDaemon, tempDataDir } from "../helpers/daemon.ts";
import { startHttpsServer, type TestHttpsServer } from "../helpers/https.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";
import { runCli } from "../setup/helpers.ts";

// Skills end to end on a real daemon: install from a local HTTPS server on an allowed host (a GitHub Enterprise
// API for folders, a plain host for a single SKILL.md), refusal of other hosts, http and traversal or symlink
// entries, the commands a skill needs added to allowed_commands only after approval, reload and uninstall over
// HTTP, slash commands and the CLI, and progressive disclosure in the agent's prompts.

let git: TestHttpsServer;
let llm: ScriptedServer;
let daemon: TestDaemon;
let gitHost: string;

const WEATHER_MD = `---
name: weather
description: Check the weather forecast for a city.
allowed-tools: Bash(curl:*)
---
# Weather
WEATHER-BODY-MARKER: call the forecast API with curl.
`;
const HELLO_MD = "---\nname: hello\ndescription: Greet people warmly.\n---\nHELLO-BODY-MARKER say hello.\n";

type Entry = { path: string; mode?: string; type?: string; content?: string };
const REPOS: Record<string, Entry[]> = {
  weather: [
    { path: "SKILL.md", content: WEATHER_MD },
    { path: "references", type: "tree" },
    { path: "references/api.md", content: "# API\nGET /forecast" },
    { path: "scripts/fetch.sh", mode: "100755", content: "#!/bin/sh\ncurl example" },
    { path: "skill.json", content: JSON.stringify({ version: "1.0.0", author: "acme", trust_level: "community" }) },
  ],
  evil: [
    { path: "SKILL.md", content: "---\nname: evil\ndescription: x\n---\nbody\n" },
    { path: "../../escape.md", content: "escaped" },
  ],
  linky: [
    { path: "SKILL.md", content: "---\nname: linky\ndescription: x\n---\nbody\n" },
    { path: "passwd", mode: "120000", content: "/etc/passwd" },
  ],
};

function gitHandler(req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? "/", "https://x");
  const send = (status: number, body: string, type = "application/json") => {
    res.writeHead(status, { "content-type": type });
    res.end(body);
  };
  const tree = /^\/api\/v3\/repos\/acme\/skills\/git\/trees\/([^/]+)$/.exec(url.pathname);
  if (tree) {
    const [ref, folder] = decodeURIComponent(tree[1]!).split(":");
    const entries = REPOS[folder!];
    if (ref !== "main" || !entries) return send(404, JSON.stringify({ message: "Not Found" }));
    return send(
      200,
      JSON.stringify({
        truncated: false,
        tree: entries.map((e) => ({
          path: e.path,
          mode: e.mode ?? (e.type === "tree" ? "040000" : "100644"),
          type: e.type ?? "blob",
          size: e.content?.length,
        })),
      }),
    );
  }
  const file = /^\/api\/v3\/repos\/acme\/skills\/contents\/([^/]+)\/(.+)$/.exec(url.pathname);
  if (file && url.searchParams.get("ref") === "main" && req.headers.accept === "application/vnd.github.raw") {
    const entry = REPOS[file[1]!]?.find((e) => e.path === decodeURIComponent(file[2]!));
    if (entry?.content !== undefined) return send(200, entry.content, "application/octet-stream");
  }
  if (url.pathname === "/plain/hello/SKILL.md") return send(200, HELLO_MD, "text/markdown");
  if (url.pathname === "/redirect-to-http/SKILL.md") {
    res.writeHead(302, { location: `http://127.0.0.1:${git.port}/plain/hello/SKILL.md` });
    return res.end();
  }
  return send(404, "{}");
}

const api = (method: string, path: string, body?: unknown) => apiCall(daemon, method, path, body, daemon.token);
const policyFile = () => join(daemon.dataDir, "tools_policy.yaml");

beforeAll(async () => {
  const dataDir = tempDataDir();
  git = await startHttpsServer(dataDir, gitHandler);
  gitHost = `127.0.0.1:${git.port}`;
  llm = await startOpenAiServer();
  writeFileSync(join(dataDir, "llm_router.yaml"), scriptedRouterYaml(llm.url, { conversation: "chat-model" }));
  writeFileSync(
    join(dataDir, "tools_policy.yaml"),
    "# my policy, keep this comment\nallowed_skill_install_hosts: [127.0.0.1, localhost]\nallowed_commands: [ls]\n",
  );
  // A skill copied in by hand, and a broken one.
  mkdirSync(join(dataDir, "skills", "manual"), { recursive: true });
  writeFileSync(
    join(dataDir, "skills", "manual", "SKILL.md"),
    "---\nname: manual\ndescription: Hand-installed.\n---\nMANUAL-BODY\n",
  );
  mkdirSync(join(dataDir, "skills", "routed"), { recursive: true });
  writeFileSync(
    join(dataDir, "skills", "routed", "SKILL.md"),
    "---\nname: routed\ndescription: Tides.\n---\nROUTED-BODY\n",
  );
  writeFileSync(
    join(dataDir, "skills", "routed", "skill.json"),
    JSON.stringify({ routing_rules: [{ keywords: ["tide tables"] }] }),
  );
  mkdirSync(join(dataDir, "skills", "broken"), { recursive: true });
  writeFileSync(join(dataDir, "skills", "broken", "SKILL.md"), "---\nname: broken\n---\nno description\n");
  daemon = await startScriptedDaemon(dataDir, {
    NODE_EXTRA_CA_CERTS: git.caFile,
    ASSISTANT_GITHUB_ENTERPRISE_HOSTS: gitHost,
  });
});
afterAll(async () => {
  await daemon?.stop();
  await git?.close();
  await llm?.close();
});

describe("skills over HTTP", () => {
  it("lists loaded skills and skipped folders with the reason", async () => {
    const res = await api("GET", "/api/skills");
    expect(res.status).toBe(200);
    expect(res.json().items.map((s: { name: string }) => s.name)).toEqual(["manual", "routed"]);
    expect(res.json().invalid).toEqual([
      { folder: "broken", reason: expect.stringContaining("`description` is required") },
    ]);
    expect((await api("GET", "/api/skills/manual")).json().body).toBe("MANUAL-BODY");
    expect((await api("GET", "/api/skills/nope")).status).toBe(404);
  });

  it("installs a repository folder from an allowed host, without executable bits, then asks before adding its commands", async () => {
    const res = await api("POST", "/api/skills/install", { url: `https://${gitHost}/acme/skills/tree/main/weather` });
    expect(res.status).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      name: "weather",
      files: ["SKILL.md", "references/api.md", "scripts/fetch.sh", "skill.json"],
      not_executable: ["scripts/fetch.sh"],
      commands: ["curl"],
      policy_change: { commands: ["curl"] },
    });
    const dir = join(daemon.dataDir, "skills", "weather");
    expect(readFileSync(join(dir, "references", "api.md"), "utf8")).toBe("# API\nGET /forecast");
    expect(statSync(join(dir, "scripts", "fetch.sh")).mode & 0o111).toBe(0);
    const listed = (await api("GET", "/api/skills")).json().items.find((s: { name: string }) => s.name === "weather");
    expect(listed.catalog).toMatchObject({ version: "1.0.0", trust_level: "community" });

    // curl is not allowed until the user approves the queued policy change.
    expect(readFileSync(policyFile(), "utf8")).not.toContain("curl");
    const item = (await api("GET", `/api/permissions/queue/${body.policy_change.queue_item_id}`)).json();
    expect(item).toMatchObject({ tool: "install_skill", status: "pending" });
    expect(item.arguments_summary).toContain("curl");
    expect((await api("POST", `/api/permissions/queue/${item.id}/approve`, {})).status).toBe(200);
    const deadline = Date.now() + 5000;
    while (!readFileSync(policyFile(), "utf8").includes("curl") && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
    }
    const policy = readFileSync(policyFile(), "utf8");
    expect(policy).toContain("# my policy, keep this comment");
    expect(policy).toMatch(/allowed_commands:.*ls.*curl/s);
  });

  it("installs a single SKILL.md from a plain host and refuses a second install of the same name", async () => {
    const url = `${git.url}/plain/hello`;
    const res = await api("POST", "/api/skills/install", { url });
    expect(res.status).toBe(201);
    expect(res.json()).toMatchObject({ name: "hello", files: ["SKILL.md"], policy_change: null });
    const again = await api("POST", "/api/skills/install", { url });
    expect(again.status).toBe(409);
    expect((await api("POST", "/api/skills/install", { url, replace: true })).json()).toMatchObject({ replaced: true });
  });

  it("refuses hosts not in allowed_skill_install_hosts, plain http, and redirects to http", async () => {
    const other = await api("POST", "/api/skills/install", { url: `https://[::1]:${git.port}/plain/hello` });
    expect(other.status).toBe(403);
    expect(other.json().error).toMatchObject({
      code: "policy_denied",
      details: { rule: expect.stringContaining("allowed_skill_install_hosts") },
    });
    const http = await api("POST", "/api/skills/install", { url: `http://127.0.0.1:${git.port}/plain/hello` });
    expect(http.status).toBe(400);
    expect(http.json().error.message).toContain("HTTPS only");
    const redirect = await api("POST", "/api/skills/install", { url: `${git.url}/redirect-to-http` });
    expect(redirect.status).toBe(403);
    expect(redirect.json().error.message).toContain("HTTPS");
  });

  it("refuses traversal and symlink entries and leaves nothing behind", async () => {
    for (const folder of ["evil", "linky"]) {
      const res = await api("POST", "/api/skills/install", {
        url: `https://${gitHost}/acme/skills/tree/main/${folder}`,
      });
      expect(res.status).toBe(400);
      expect(res.json().error.message).toMatch(folder === "evil" ? /refused entry.*\.\./ : /symlink/);
    }
    const left = readdirSync(join(daemon.dataDir, "skills"));
    expect(left.filter((n) => n.startsWith(".") || n === "evil" || n === "linky")).toEqual([]);
    expect(existsSync(join(daemon.dataDir, "escape.md"))).toBe(false);
    expect(
      (await api("POST", "/api/skills/install", { url: `https://${gitHost}/acme/skills/tree/main/missing` })).status,
    ).toBe(404);
    expect((await api("POST", "/api/skills/install", { url: "not a url" })).status).toBe(400);
    expect((await api("POST", "/api/skills/install", {})).status).toBe(400);
  });

  it("installs through the install_skill tool only after approval (the agent's path)", async () => {
    await api("DELETE", "/api/skills/hello");
    const res = await api("POST", "/api/tools/install_skill/invoke", { url: `${git.url}/plain/hello` });
    expect(res.status).toBe(202);
    expect(existsSync(join(daemon.dataDir, "skills", "hello"))).toBe(false);
    await api("POST", `/api/permissions/queue/${res.json().queue_item_id}/approve`, {});
    const deadline = Date.now() + 5000;
    while (!existsSync(join(daemon.dataDir, "skills", "hello", "SKILL.md")) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
    }
    expect((await api("GET", "/api/skills/hello")).status).toBe(200);
  });

  it("reloads after a manual copy and uninstalls", async () => {
    mkdirSync(join(daemon.dataDir, "skills", "copied"));
    writeFileSync(join(daemon.dataDir, "skills", "copied", "SKILL.md"), "---\nname: copied\ndescription: c\n---\nC\n");
    expect((await api("POST", "/api/skills/reload")).json().loaded).toContain("copied");
    expect((await api("DELETE", "/api/skills/copied")).json()).toEqual({ removed: "copied" });
    expect(existsSync(join(daemon.dataDir, "skills", "copied"))).toBe(false);
    expect((await api("DELETE", "/api/skills/copied")).status).toBe(404);
    expect((await api("DELETE", "/api/skills/.install-x")).status).toBe(400);
  });
});

describe("skills in chat and the CLI", () => {
  it("answers /skills, /skills reload and /skills uninstall", async () => {
    const say = async (message: string) =>
      (await api("POST", "/api/message", { message, wait: true })).json().reply as string;
    const list = await say("/skills");
    expect(list).toContain("manual");
    expect(list).toContain("broken: ");
    expect(await say("/skills reload")).toContain("Reloaded:");
    mkdirSync(join(daemon.dataDir, "skills", "temp"));
    writeFileSync(join(daemon.dataDir, "skills", "temp", "SKILL.md"), "---\nname: temp\ndescription: t\n---\nT\n");
    await say("/skills reload");
    expect(await say("/skills uninstall temp")).toBe("Skill temp removed.");
    expect(await say("/skills uninstall temp")).toContain("no skill named temp");
  });

  it("lists skills with `assistant skill list --json`", async () => {
    const result = await runCli(["skill", "list", "--json"], { env: { ASSISTANT_DATA_DIR: daemon.dataDir } });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).items.map((s: { name: string }) => s.name)).toContain("manual");
  });

  it("gives the model the index only, and a skill's body when it calls use_skill", async () => {
    const before = llm.requests.length;
    llm.enqueue(
      { kind: "tool_call", name: "use_skill", arguments: { name: "manual" } },
      { kind: "reply", text: "Done by the manual." },
    );
    const res = await api("POST", "/api/message", { message: "Do the manual thing", wait: true });
    expect(res.json()).toMatchObject({ status: "completed", reply: "Done by the manual." });
    const bodies = llm.requests.slice(before).map((r) => JSON.stringify(r.body));
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toContain("- manual: Hand-installed.");
    expect(bodies[0]).not.toContain("MANUAL-BODY");
    expect(bodies[1]).toContain("MANUAL-BODY");
  });

  it("puts a skill's instructions in the prompt when its routing rule matches the message", async () => {
    const rules = (
      await api("POST", "/api/plugins/routing_rules/match", { message: "Print the tide tables please" })
    ).json();
    expect(rules).toMatchObject({ matched: true, target: { kind: "skill", name: "routed" } });
    const before = llm.requests.length;
    await api("POST", "/api/message", { message: "Print the tide tables please", wait: true });
    expect(JSON.stringify(llm.requests[before]!.body)).toContain("ROUTED-BODY");
  });
});
