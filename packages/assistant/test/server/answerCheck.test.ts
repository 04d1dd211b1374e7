import { describe, expect, it } from "vitest";
import { z } from "zod";
import { answerProblem } from "../../src/server/answerCheck.ts";
import { defineRoute } from "../../src/server/route.ts";

// The answer check of test runs (server/answerCheck.ts): what turns a route answering something other than what it
// declares into a 500 in every daemon test. Each case is an answer a client generated from the OpenAPI document
// would mishandle.

const item = z.object({ id: z.string(), note: z.string().nullable(), size: z.number().optional() });

const route = defineRoute({
  method: "POST",
  url: "/api/things/:id",
  operationId: "touchThing",
  summary: "test route",
  tag: "test",
  response: item,
  responses: { 202: z.object({ queued: z.literal(true) }) },
  errors: ["not_found"],
  handler: () => ({ id: "a", note: null }),
});

const json = (value: unknown) => JSON.stringify(value);
const error = (code: string) => json({ error: { code, message: "m" } });

describe("answerProblem", () => {
  it("accepts what the route declares, per status", () => {
    expect(answerProblem(route, 200, json({ id: "a", note: null }))).toBeUndefined();
    expect(answerProblem(route, 200, json({ id: "a", note: "n", size: 3 }))).toBeUndefined();
    expect(answerProblem(route, 202, json({ queued: true }))).toBeUndefined();
    expect(answerProblem(route, 404, error("not_found"))).toBeUndefined();
    // What every route may answer: bad input, the browser guard, the body limit, a bug, a missing token.
    for (const code of ["invalid_request", "forbidden", "payload_too_large", "internal", "unauthorized"]) {
      expect(answerProblem(route, 400, error(code)), code).toBeUndefined();
    }
  });

  it("names a field of the wrong type, a missing field and a field the schema does not declare", () => {
    expect(answerProblem(route, 200, json({ id: 1, note: null }))).toMatch(/^id: /);
    expect(answerProblem(route, 200, json({ id: "a" }))).toMatch(/^note: /);
    expect(answerProblem(route, 200, json({ id: "a", note: null, secret: "x" }))).toBe("secret is not in the schema");
  });

  it("refuses an undeclared status, an undeclared error code and a body that is not the error shape", () => {
    expect(answerProblem(route, 201, json({ id: "a", note: null }))).toBe("the route does not declare a 201 answer");
    expect(answerProblem(route, 409, error("conflict"))).toBe("409 conflict is not among the route's errors");
    expect(answerProblem(route, 404, json({ message: "gone" }))).toBe("the 404 answer does not have the error shape");
    expect(answerProblem(route, 200, "not json")).toBe("the 200 answer is not JSON");
  });

  it("lets a raw route answer its declared statuses as it likes", () => {
    const page = defineRoute({
      method: "GET",
      url: "/page",
      operationId: "page",
      summary: "html",
      tag: "test",
      auth: "none",
      raw: { 200: { description: "a page", contentType: "text/html" } },
      handler: () => undefined,
    });
    expect(answerProblem(page, 200, "<p>hi</p>")).toBeUndefined();
    expect(answerProblem(page, 302, "")).toBe("the route does not declare a 302 answer");
    expect(answerProblem(page, 401, error("unauthorized"))).toBe("401 unauthorized is not among the route's errors");
  });
});
