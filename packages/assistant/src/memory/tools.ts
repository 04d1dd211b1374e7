import { z } from "zod";
import { defineTool, type Tool, ToolFailure } from "../tools/tool.ts";
import { isAppError } from "../util/errors.ts";
import type { MemoryService } from "./memoryService.ts";
import { MAX_MEMORY_CHARS, MAX_SUBJECT_CHARS, MEMORY_KINDS } from "./store.ts";

// The agent's memory tools. Like every tool they pass the policy chain (profiles, deny lists, decisions,
// require_approval), so a user can keep the agent from writing or erasing memories.

export function memoryTools(memory: MemoryService): Tool[] {
  const remember = defineTool({
    name: "remember",
    description:
      "Store a durable fact, preference, person, project or decision about the user for later conversations.",
    parameters: z.strictObject({
      content: z.string().min(3).max(MAX_MEMORY_CHARS).describe("one self-contained sentence"),
      kind: z.enum(MEMORY_KINDS).optional().describe("default fact"),
      subject: z.string().min(1).max(MAX_SUBJECT_CHARS).optional().describe("what it is about, 1-4 words"),
    }),
    resource: "none",
    execute: async ({ content, kind, subject }, ctx) => {
      const stored = memory.remember({
        content,
        kind: kind ?? "fact",
        ...(subject ? { subject } : {}),
        ...(ctx.sessionId ? { sessionId: ctx.sessionId } : {}),
        ...(ctx.taskId ? { taskId: ctx.taskId } : {}),
      });
      return {
        text: `${stored.action === "created" ? "Remembered" : "Updated"} ${stored.memory.id}: ${stored.memory.content}`,
      };
    },
  });
  const recall = defineTool({
    name: "recall",
    description: "Search what you remember about the user (facts, preferences, people, projects, decisions).",
    parameters: z.strictObject({
      query: z.string().min(1).max(1000).describe("what to look for"),
      limit: z.number().int().min(1).max(20).optional().describe("default 5"),
    }),
    resource: "none",
    execute: async ({ query, limit }, ctx) => {
      const hits = await memory.search(query, { limit: limit ?? 5, signal: ctx.signal });
      if (hits.length === 0) return { text: "Nothing remembered matches." };
      const lines = hits.map(
        (h) => `${h.memory.id} (${h.memory.kind}, ${h.memory.updated_at.slice(0, 10)}): ${h.memory.content}`,
      );
      return { text: lines.join("\n"), untrusted: "memory" };
    },
  });
  const forget = defineTool({
    name: "forget",
    description: "Delete one remembered item by its id (ids come from recall).",
    parameters: z.strictObject({ id: z.string().min(1).max(100).describe("memory id, e.g. mem_...") }),
    resource: "none",
    execute: async ({ id }) => {
      try {
        const removed = memory.forget(id);
        return { text: `Forgot ${removed.id}: ${removed.content}` };
      } catch (error) {
        if (isAppError(error)) throw new ToolFailure(error.message);
        throw error;
      }
    },
  });
  return [remember, recall, forget];
}
