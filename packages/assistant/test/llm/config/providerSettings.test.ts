import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { llmRouterSchema } from "../../../src/config/schemas/llmRouter.ts";
import { addCloudA, addCloudB, listProviders, setLocalServer } from "../../../src/llm/providerSettings.ts";
import { AppError } from "../../../src/util/errors.ts";
import { Vault } from "../../../src/vault/vault.ts";
import { tempData } from "../../config/helpers.ts";

const SECRET = "sk-unit-7f3a9c1e-do-not-print";

function setup() {
  const data = tempData();
  const vault = new Vault({ paths: data.paths, env: { ASSISTANT_VAULT_MASTER_KEY: "unit-test-master-key" } });
  return { data, vault, router: () => readFileSync(data.paths.routerFile, "utf8") };
}

describe("listProviders", () => {
  it("says where each key comes from and whether it is there, never what it is", async () => {
    const { vault } = setup();
    await vault.set("cloud_a_api_key", SECRET);
    const config = llmRouterSchema.parse({
      providers: {
        cloud_a: { api_key_ref: "vault://cloud_a_api_key" },
        cloud_azure: { api_key_ref: "AZURE_KEY", base_url: "https://example.openai.azure.com" },
        lowbit_server: { api_key_ref: "vault://lowbit_key", base_url: "http://127.0.0.1:8080/v1" },
      },
      task_types: {
        conversation: {
          primary: { provider: "cloud_a", model: "gpt-4o-mini" },
          fallback: [{ provider: "local_server", model: "m" }],
        },
        image_generation: { primary: { provider: "cloud_azure", model: "dall-e" } },
      },
    });
    const providers = listProviders(config, { AZURE_KEY: SECRET, LOCAL_SERVER_HOST: "http://10.0.0.9:11434" }, vault);
    expect(JSON.stringify(providers)).not.toContain(SECRET);
    const byId = Object.fromEntries(providers.map((p) => [p.id, p]));
    expect(Object.keys(byId)).toEqual([
      "local_server",
      "cloud_a",
      "cloud_azure",
      "cloud_b",
      "lowbit_server",
      "assistant_embedded",
      "assistant_core",
    ]);
    expect(byId.cloud_a).toMatchObject({ configured: true, base_url: null, key: "vault://cloud_a_api_key present" });
    expect(byId.cloud_a?.used_by).toContain("code_generation"); // inherited from conversation
    expect(byId.cloud_azure).toMatchObject({ key: "env AZURE_KEY set", used_by: ["image_generation"] });
    expect(byId.lowbit_server).toMatchObject({ key: "vault://lowbit_key missing", used_by: [] });
    expect(byId.cloud_b).toMatchObject({ configured: false, key: "env CLOUD_B_API_KEY unset" });
    // No base_url in the file: LOCAL_SERVER_HOST, which also counts as configured.
    expect(byId.local_server).toMatchObject({ configured: true, base_url: "http://10.0.0.9:11434", key: "none" });
    expect(byId.assistant_core).toMatchObject({ configured: true, key: "none" });
  });

  it("uses the file's local server URL over the environment, and the default without either", () => {
    const { vault } = setup();
    const withUrl = llmRouterSchema.parse({ providers: { local_server: { base_url: "http://box:11434" } } });
    const env = { LOCAL_SERVER_HOST: "http://other:11434", CLOUD_A_API_KEY: SECRET };
    const [local, cloudA] = listProviders(withUrl, env, vault);
    expect(local?.base_url).toBe("http://box:11434");
    expect(cloudA).toMatchObject({ configured: true, key: "env CLOUD_A_API_KEY set" });
    expect(listProviders(llmRouterSchema.parse({}), {}, vault)[0]).toMatchObject({
      configured: false,
      base_url: "http://localhost:11434",
    });
  });
});

describe("setLocalServer without asking the server (probe: false)", () => {
  it("writes the default URL into a new router file", async () => {
    const { data, router } = setup();
    const change = await setLocalServer(data.paths, { probe: false });
    expect(change).toEqual({
      provider: "local_server",
      file: data.paths.routerFile,
      base_url: "http://localhost:11434",
    });
    expect(parse(router()).providers).toEqual({ local_server: { base_url: "http://localhost:11434" } });
  });

  it("sets a category's route with the model", async () => {
    const { data, router } = setup();
    const change = await setLocalServer(data.paths, {
      url: "http://10.0.0.5:11434",
      category: "code_generation",
      model: "qwen",
      probe: false,
    });
    expect(change.route).toMatchObject({
      category: "code_generation",
      primary: { provider: "local_server", model: "qwen" },
    });
    const file = parse(router());
    expect(file.providers.local_server.base_url).toBe("http://10.0.0.5:11434");
    expect(file.task_types.code_generation.primary).toEqual({ provider: "local_server", model: "qwen" });
  });

  it("refuses a bad URL or a category without a model before writing anything", async () => {
    const { data } = setup();
    for (const url of ["ftp://box", "localhost:11434", "http://user:pw@box:11434"]) {
      const error = await rejection(setLocalServer(data.paths, { url, probe: false }));
      expect(error.message).toMatch(/^invalid local server URL: /);
    }
    expect((await rejection(setLocalServer(data.paths, { category: "conversation", probe: false }))).message).toBe(
      "a category needs the model local_server should use for it (--model)",
    );
    expect((await rejection(setLocalServer(data.paths, { model: "m", probe: false }))).message).toMatch(
      /needs a category/,
    );
    expect(existsSync(data.paths.routerFile)).toBe(false);
  });
});

/** The AppError a promise rejects with. */
async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe("addCloudA and addCloudB", () => {
  it("stores the key in the vault only and refers to it from the router file", async () => {
    const { data, vault, router } = setup();
    const change = await addCloudA(data.paths, vault, {
      apiKey: ` ${SECRET}\n`,
      category: "conversation",
      model: "gpt-4o",
    });
    expect(change).toMatchObject({ provider: "cloud_a", api_key_ref: "vault://cloud_a_api_key", key_stored: true });
    expect(vault.get("cloud_a_api_key")).toBe(SECRET);
    expect(router()).not.toContain(SECRET);
    const file = parse(router());
    expect(file.providers.cloud_a).toEqual({ api_key_ref: "vault://cloud_a_api_key" });
    expect(file.task_types.conversation.primary).toEqual({ provider: "cloud_a", model: "gpt-4o" });
    // A second run without a key uses the stored one.
    expect((await addCloudA(data.paths, vault, {})).key_stored).toBe(false);
  });

  it("without a key and an empty vault says how to give one, and writes nothing", async () => {
    const { data, vault } = setup();
    const error = await rejection(addCloudB(data.paths, vault, { category: "conversation", model: "x/y" }));
    expect(error.message).toBe(
      "cloud_b needs an API key and the vault has none (cloud_b_api_key): pipe it on standard input (`assistant config provider add-cloud-b < key.txt`), store it with `assistant vault set cloud_b_api_key`, or pass --api-key (which may stay in your shell history)",
    );
    expect((await rejection(addCloudB(data.paths, vault, { apiKey: "  " }))).message).toBe("the API key is empty");
    expect(existsSync(data.paths.routerFile)).toBe(false);
    expect(vault.list()).toEqual([]);
  });

  it("does not store the key when the router file is invalid", async () => {
    const { data, vault } = setup();
    const invalid = "providers:\n  cloud_a:\n    api_key: inline\n";
    data.write("llm_router.yaml", invalid);
    const error = await rejection(addCloudA(data.paths, vault, { apiKey: SECRET }));
    expect(error.message).toContain("providers.cloud_a.api_key: unknown key");
    expect(vault.list()).toEqual([]);
    expect(readFileSync(data.paths.routerFile, "utf8")).toBe(invalid);
  });
});
