import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type Hold,
  inspectWasm,
  loadPlugin,
  PluginCallError,
  type PluginFailureKind,
  type PluginInstance,
  type PluginLimits,
  type PluginSandbox,
} from "../../src/plugins/runtime.ts";
import { buildTestPlugin } from "./buildFixtures.ts";

// The plugin runtime against real AssemblyScript plugins (fixtures/, compiled once by buildFixtures.ts): the benign
// `echo` plugin and the `hostile` one that spins, exhausts its memory, traps, calls an undeclared host and floods
// its output. Each failure must come back as a PluginCallError of the right kind, and the instance must recover.
// Fuel is unlimited unless a test is about it, so the timeout tests meet the timeout first.

const LIMITS: PluginLimits = {
  timeoutMs: 300,
  maxMemoryPages: 256,
  fuel: Number.MAX_SAFE_INTEGER,
  maxOutputBytes: 1 << 20,
};

let echoWasm: Uint8Array;
let hostileWasm: Uint8Array;
let server: Server;
let origin: string;
const opened: PluginInstance[] = [];

beforeAll(async () => {
  [echoWasm, hostileWasm] = await Promise.all([buildTestPlugin("echo"), buildTestPlugin("hostile")]);
  server = createServer((req, res) => res.end(`served ${req.url}`));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await Promise.all(opened.map((p) => p.close()));
  await new Promise((resolve) => server.close(resolve));
});

function sandbox(overrides: Partial<PluginSandbox> = {}): PluginSandbox {
  return {
    allowedHosts: [],
    config: {},
    fetch: vi.fn((url: URL, init: RequestInit) => fetch(url, init)),
    files: vi.fn(() => Promise.reject(new Error("no file access in this test"))),
    ...overrides,
  };
}

async function open(wasm: Uint8Array, box = sandbox(), limits = LIMITS): Promise<PluginInstance> {
  const plugin = await loadPlugin(wasm, box, limits);
  opened.push(plugin);
  return plugin;
}

async function failure(promise: Promise<unknown>): Promise<PluginCallError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PluginCallError);
  return error as PluginCallError;
}

async function expectKind(promise: Promise<unknown>, kind: PluginFailureKind): Promise<PluginCallError> {
  const error = await failure(promise);
  expect(error.kind, error.message).toBe(kind);
  return error;
}

describe("benign plugin", () => {
  it("echoes its input and lists its exports", async () => {
    const plugin = await open(echoWasm);
    expect(await plugin.call("echo", "héllo wörld")).toBe("héllo wörld");
    expect(await plugin.call("echo", "")).toBe("");
    expect((await plugin.exports()).sort()).toEqual(["count", "echo", "fetch_allowed", "file_op", "greet"]);
    expect(inspectWasm(echoWasm).exports.sort()).toEqual(["count", "echo", "fetch_allowed", "file_op", "greet"]);
  });

  it("reuses one instance across calls and serialises concurrent calls", async () => {
    const plugin = await open(echoWasm);
    const counts = await Promise.all(Array.from({ length: 20 }, () => plugin.call("count", "")));
    expect(counts).toEqual(Array.from({ length: 20 }, (_, i) => String(i + 1)));
  });

  it("runs every call with the full fuel limit", async () => {
    // An echo of a short text takes about 20,000 instructions: each call fits, twenty together would not.
    const plugin = await open(echoWasm, sandbox(), { ...LIMITS, fuel: 100_000 });
    for (let i = 0; i < 20; i++) expect(await plugin.call("echo", "héllo wörld")).toBe("héllo wörld");
  });

  it("gives the plugin its config", async () => {
    const plugin = await open(echoWasm, sandbox({ config: { greeting_name: "Ada" } }));
    expect(await plugin.call("greet", "")).toBe("Hello, Ada");
  });

  it("makes HTTP requests to allowed hosts through sandbox.fetch", async () => {
    const box = sandbox({ allowedHosts: ["127.0.0.1"] });
    const plugin = await open(echoWasm, box);
    expect(await plugin.call("fetch_allowed", `${origin}/data?q=1`)).toBe("served /data?q=1");
    expect(box.fetch).toHaveBeenCalledTimes(1);
    expect(String(vi.mocked(box.fetch).mock.calls[0]?.[0])).toBe(`${origin}/data?q=1`);
  });

  it("fails as denied when sandbox.fetch refuses, and recovers", async () => {
    const box = sandbox({
      allowedHosts: ["127.0.0.1"],
      fetch: vi.fn(async () => {
        throw new Error("policy says no");
      }),
    });
    const plugin = await open(echoWasm, box);
    const error = await expectKind(plugin.call("fetch_allowed", `${origin}/secret`), "denied");
    expect(error.message).toContain("policy says no");
    expect(await plugin.call("echo", "after")).toBe("after");
  });

  it("answers the fs host function through sandbox.files, large answers included", async () => {
    const big = "x".repeat(3 * 1024 * 1024); // larger than the SDK's shared buffer between the threads
    const box = sandbox({
      files: vi.fn(async (request: string) => (request.includes("big") ? big : `host saw ${request}`)),
    });
    const plugin = await open(echoWasm, box, { ...LIMITS, maxOutputBytes: 4 * 1024 * 1024 });
    expect(await plugin.call("file_op", '{"op":"list","path":"/data"}')).toBe('host saw {"op":"list","path":"/data"}');
    expect(await plugin.call("file_op", '{"op":"read","path":"/big"}')).toBe(big);
    expect(box.files).toHaveBeenCalledTimes(2);
  });

  it("stops the call's clock while a host function holds for an approval, and only then", async () => {
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const box = sandbox({
      files: vi.fn(async (request: string, hold: Hold) => {
        // 3x the 300 ms limit: held, as an approval would be; or not held, as slow host work would be
        await (request.includes("held") ? hold(wait(900)) : wait(900));
        return "done";
      }),
    });
    const plugin = await open(echoWasm, box);
    expect(await plugin.call("file_op", '{"op":"read","path":"/held"}')).toBe("done");
    await expectKind(plugin.call("file_op", '{"op":"read","path":"/slow"}'), "timeout");
    expect(await plugin.call("echo", "after")).toBe("after");
  });

  it("fails as denied when sandbox.files refuses, and recovers", async () => {
    const box = sandbox({
      files: vi.fn(async () => {
        throw new Error("outside allowed_paths");
      }),
    });
    const plugin = await open(echoWasm, box);
    const error = await expectKind(plugin.call("file_op", '{"op":"read","path":"/etc/passwd"}'), "denied");
    expect(error.message).toContain("outside allowed_paths");
    expect(await plugin.call("echo", "after")).toBe("after");
  });
});

describe("hostile plugin", () => {
  it("refuses a host outside allowedHosts without calling sandbox.fetch", async () => {
    const box = sandbox({ allowedHosts: ["127.0.0.1"] });
    const plugin = await open(hostileWasm, box);
    const error = await expectKind(plugin.call("undeclared_host", "http://example.com/steal"), "denied");
    expect(error.message).toContain("example.com");
    expect(box.fetch).not.toHaveBeenCalled();
    expect(await plugin.call("echo", "after")).toBe("after");
  });

  it("stops an infinite loop at the timeout and serves the next call from a fresh worker", async () => {
    const plugin = await open(hostileWasm);
    const started = Date.now();
    const spinning = plugin.call("spin", "");
    const queued = plugin.call("echo", "queued");
    await expectKind(spinning, "timeout");
    expect(Date.now() - started).toBeGreaterThanOrEqual(LIMITS.timeoutMs - 5);
    expect(Date.now() - started).toBeLessThan(LIMITS.timeoutMs + 1_000);
    expect(await queued).toBe("queued");
  });

  it("stops an infinite loop when its fuel runs out, long before the timeout, and recovers", async () => {
    const plugin = await open(hostileWasm, sandbox(), { ...LIMITS, timeoutMs: 10_000, fuel: 50_000_000 });
    const started = Date.now();
    const error = await expectKind(plugin.call("spin", ""), "fuel_exhausted");
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error.message).toContain("50000000 instructions");
    expect(await plugin.call("echo", "after")).toBe("after");
  });

  it("cancels a call through its signal", async () => {
    const plugin = await open(hostileWasm, sandbox(), { ...LIMITS, timeoutMs: 10_000 });
    const controller = new AbortController();
    const spinning = plugin.call("spin", "", controller.signal);
    setTimeout(() => controller.abort(), 50);
    await expectKind(spinning, "cancelled");
    expect(await plugin.call("echo", "again")).toBe("again");
  });

  it("traps when the memory cap is reached, without harming the host", async () => {
    const plugin = await open(hostileWasm, sandbox(), { ...LIMITS, maxMemoryPages: 64 });
    const heapBefore = process.memoryUsage().heapUsed;
    // AssemblyScript's allocator hits `unreachable` when memory.grow fails: indistinguishable from any other trap.
    await expectKind(plugin.call("bomb", ""), "trap");
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(32 * 1024 * 1024);
    expect(await plugin.call("echo", "alive")).toBe("alive");
  });

  it("reports a trap with the plugin's message", async () => {
    const plugin = await open(hostileWasm, sandbox(), { ...LIMITS, fuel: 50_000_000 });
    const error = await expectKind(plugin.call("trap", ""), "trap");
    expect(error.message).toContain("plugin exploded on purpose");
    expect(await plugin.call("echo", "next")).toBe("next");
  });

  it("refuses output over the limit", async () => {
    const plugin = await open(hostileWasm);
    const error = await expectKind(plugin.call("oversized", ""), "output_too_large");
    expect(error.message).toContain(String(4 << 20));
  });

  it("refuses an export the plugin does not have", async () => {
    const plugin = await open(hostileWasm);
    await expectKind(plugin.call("not_there", ""), "missing_export");
  });

  it("fails calls after close as cancelled", async () => {
    const plugin = await open(hostileWasm);
    await plugin.close();
    await expectKind(plugin.call("echo", "x"), "cancelled");
  });
});

describe("module checks", () => {
  // (module (import "env" "memory" (memory 1)))
  const importsMemory = Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x02, 0x0f, 0x01, 0x03, 0x65, 0x6e, 0x76, 0x06, 0x6d, 0x65, 0x6d,
    0x6f, 0x72, 0x79, 0x02, 0x00, 0x01,
  ]);
  // (module (func $spin (loop (br 0))) (start $spin))
  const spinsAtStart = Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00, 0x08,
    0x01, 0x00, 0x0a, 0x09, 0x01, 0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b,
  ]);

  it("refuses bytes that are not WebAssembly", async () => {
    const garbage = new TextEncoder().encode("definitely not wasm");
    await expectKind(loadPlugin(garbage, sandbox(), LIMITS), "invalid_module");
    expect(() => inspectWasm(garbage)).toThrow(PluginCallError);
  });

  it("refuses an imported memory and imports the sandbox does not provide", async () => {
    const error = await expectKind(loadPlugin(importsMemory, sandbox(), LIMITS), "invalid_module");
    expect(error.message).toMatch(/memory/);
  });

  it("refuses a module needing more memory than the cap", async () => {
    const error = await expectKind(loadPlugin(echoWasm, sandbox(), { ...LIMITS, maxMemoryPages: 0 }), "invalid_module");
    expect(error.message).toMatch(/pages/);
  });

  it("runs the start function under the timeout", async () => {
    await expectKind(loadPlugin(spinsAtStart, sandbox(), LIMITS), "timeout");
  });

  it("runs the start function under the fuel limit", async () => {
    await expectKind(
      loadPlugin(spinsAtStart, sandbox(), { ...LIMITS, timeoutMs: 10_000, fuel: 1_000_000 }),
      "fuel_exhausted",
    );
  });
});
