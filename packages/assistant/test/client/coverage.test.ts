import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AssistantClient } from "@assistant/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientFiles, generatedDir } from "../../../../scripts/generateClient.ts";
import { startDaemon, type TestDaemon } from "../helpers/daemon.ts";

// The typed client against the real daemon's OpenAPI document (docs/http-api.md "Typed client"): every operation
// has a method that calls its route, and the generated files are what `npm run generate:client` writes now.

// biome-ignore lint/suspicious/noExplicitAny: the test walks the OpenAPI document loosely
type Json = Record<string, any>;

let daemon: TestDaemon;
let doc: Json;

beforeAll(async () => {
  daemon = await startDaemon();
  doc = await new AssistantClient({ baseUrl: daemon.url, token: daemon.token }).getOpenApi();
});

afterAll(async () => {
  expect(await daemon.stop()).toBe(0);
});

interface Documented {
  operationId: string;
  method: string;
  path: string;
  pathParams: string[];
  streams: boolean;
}

function operations(): Documented[] {
  return Object.entries(doc.paths as Json).flatMap(([path, methods]) =>
    Object.entries(methods as Json).map(([method, op]) => {
      const success = (op.responses as Json)["200"]?.content ?? {};
      return {
        operationId: op.operationId as string,
        method: method.toUpperCase(),
        path,
        pathParams: ((op.parameters ?? []) as Json[]).filter((p) => p.in === "path").map((p) => p.name as string),
        streams: "application/json" in success && "text/event-stream" in success,
      };
    }),
  );
}

/** Calls a method by name with `p-<name>` for each path parameter and records the request it makes, unsent. */
async function requestOf(name: string, pathParams: string[]): Promise<{ method: string; url: string }> {
  let seen: { method: string; url: string } | undefined;
  const client = new AssistantClient({
    baseUrl: daemon.url,
    token: daemon.token,
    fetch: async (url, init) => {
      seen = { method: init?.method ?? "GET", url: String(url) };
      throw new Error("recorded, not sent");
    },
  });
  const method = (client as unknown as Record<string, (...args: unknown[]) => unknown>)[name]!;
  const result = method.apply(client, [...pathParams.map((param) => `p-${param}`), {}]);
  if (Symbol.asyncIterator in (result as object)) {
    await (result as AsyncGenerator).next().catch(() => {});
  } else await (result as Promise<unknown>).catch(() => {});
  return seen!;
}

describe("the typed client", () => {
  it("has a method for every operation of the OpenAPI document, calling its method and path", async () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThanOrEqual(85);
    const missing = ops.filter(
      ({ operationId }) => typeof (AssistantClient.prototype as unknown as Json)[operationId] !== "function",
    );
    expect(missing.map((op) => `${op.method} ${op.path} (${op.operationId})`)).toEqual([]);
    const wrong: string[] = [];
    for (const op of ops) {
      const expected = `${op.method} ${daemon.url}${op.path.replace(/\{(\w+)\}/g, "p-$1")}`;
      const names = [op.operationId, ...(op.streams ? [`${op.operationId}Stream`] : [])];
      for (const name of names) {
        const request = await requestOf(name, op.pathParams);
        const made = `${request.method} ${request.url.split("?")[0]}`;
        if (made !== expected) wrong.push(`${name}: ${made}, documented ${expected}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("streams the operations that answer server-sent events: a Stream method beside the JSON one", () => {
    const streaming = operations()
      .filter((op) => op.streams)
      .map((op) => op.operationId);
    expect(streaming).toEqual(expect.arrayContaining(["sendMessage", "createChatCompletion"]));
    for (const id of streaming)
      expect(typeof (AssistantClient.prototype as unknown as Json)[`${id}Stream`]).toBe("function");
  });

  it("is generated from the current document: the files equal what npm run generate:client writes now", () => {
    const expected = clientFiles(doc);
    const stale = Object.entries(expected)
      .filter(([file, text]) => readFileSync(file, "utf8") !== text)
      .map(([file]) => file);
    expect(stale, "run `npm run generate:client`").toEqual([]);
    const names = readdirSync(generatedDir)
      .filter((name) => name.endsWith(".ts"))
      .map((name) => join(generatedDir, name));
    expect(names.sort()).toEqual(Object.keys(expected).sort());
  });
});
