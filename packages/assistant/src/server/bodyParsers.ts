import type { FastifyInstance, FastifyRequest } from "fastify";
import { bodyTooDeep, jsonTooDeep, valueTooDeep } from "./bodyDepth.ts";
import { parseYamlBody, YAML_CONTENT_TYPES } from "./routes/mission.ts";

/**
 * The request body parsers, for every route: JSON (Fastify's own parser, with its prototype-poisoning checks,
 * after a nesting check on the text) and YAML where a route accepts it (the mission file). Any other content
 * type is a 415. The body limit applies to both.
 */
export function installBodyParsers(app: FastifyInstance): void {
  app.removeContentTypeParser("text/plain");

  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = body as string; // parseAs: "string"
    if (jsonTooDeep(text)) return done(bodyTooDeep(), undefined);
    parseJson(request, text, done);
  });

  // yaml reports a document too deep for its own parser as a syntax error (400); the depth check covers the rest.
  app.addContentTypeParser(
    YAML_CONTENT_TYPES,
    { parseAs: "string" },
    async (request: FastifyRequest, body: string | Buffer) => {
      const value = await parseYamlBody(request, body as string);
      if (valueTooDeep(value)) throw bodyTooDeep();
      return value;
    },
  );
}
