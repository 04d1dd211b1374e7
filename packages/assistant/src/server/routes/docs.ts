import { z } from "zod";
import { DocsLibrary, MAX_DOC_BYTES, packageDocsDir } from "../../docs/library.ts";
import type { Services } from "../../runtime/services.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

const docSourceSchema = z.enum(["docs", "spec"]);

const docsListSchema = z
  .object({
    working_directory: z.string(),
    folders: z.array(z.object({ source: docSourceSchema, dir: z.string() })),
    items: z.array(
      z
        .object({
          path: z.string(),
          title: z.string(),
          source: docSourceSchema,
          bytes: z.number(),
          matches: z.number().optional(),
          excerpt: z.string().optional(),
        })
        .meta({ id: "DocItem" }),
    ),
  })
  .meta({ id: "DocsList" });

export function docsRoutes(services: Services): RouteSpec[] {
  const library = new DocsLibrary({
    cwd: process.cwd(),
    specDir: services.settings.specDir,
    packageDocs: packageDocsDir(),
  });
  return [
    defineRoute({
      method: "GET",
      url: "/api/docs",
      operationId: "listDocs",
      summary:
        "The Markdown files of docs/ (working directory, else the installed package) and ASSISTANT_SPEC_DIR (under @spec/), with titles; ?q= keeps the files holding every word",
      tag: "docs",
      query: z.strictObject({ q: z.string().max(200).optional() }),
      response: docsListSchema,
      handler: ({ query }) => library.list(query.q),
    }),
    defineRoute({
      method: "GET",
      url: "/api/docs/:path",
      operationId: "getDoc",
      summary: `The Markdown of one listed file (its path as one URL segment, / as %2F); files over ${MAX_DOC_BYTES} bytes are refused`,
      tag: "docs",
      params: z.strictObject({ path: z.string() }),
      errors: ["not_found", "payload_too_large"],
      raw: { 200: { description: "the file's Markdown", contentType: "text/markdown; charset=utf-8" } },
      handler: async ({ params }, _request, reply) => {
        const text = await library.read(params.path);
        reply.type("text/markdown; charset=utf-8").header("cache-control", "no-store").send(text);
      },
    }),
  ];
}
