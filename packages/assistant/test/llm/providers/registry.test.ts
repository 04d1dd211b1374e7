import { describe, expect, it } from "vitest";
import { loadProvider } from "../../../src/llm/providers/index.ts";
import { providerContext } from "./helpers.ts";

describe("provider registry", () => {
  it.each([
    ["cloud_a", false],
    ["cloud_azure", false],
    ["cloud_b", false],
    ["lowbit_server", true],
    ["local_server", true],
  ] as const)("loads %s (local: %s) without resolving keys or touching the network", async (id, local) => {
    // No keys and no servers configured: building the provider must still succeed.
    const provider = await loadProvider(id, providerContext());
    expect(provider.id).toBe(id);
    expect(provider.local).toBe(local);
  });

  it("builds a fresh provider per call (the router caches, not the registry)", async () => {
    const context = providerContext();
    expect(await loadProvider("cloud_a", context)).not.toBe(await loadProvider("cloud_a", context));
  });
});
