import { z } from "zod";
import { MAX_MESSAGE_CHARS } from "../../agent/chat.ts";
import type { Services } from "../../runtime/services.ts";
import { AppError, isAppError } from "../../util/errors.ts";
import { errorBody } from "../errors.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { openStreams } from "../sse.ts";

// POST /api/message (DESIGN.md sections 5 and 11): `wait: true` answers the whole reply; `stream: true` answers
// server-sent events `start`, `token`, `reset`, `tool_call`, `done` (or `error`). A client that disconnects
// cancels the model call.

const messageBody = z.strictObject({
  message: z.string().min(1).max(MAX_MESSAGE_CHARS),
  session_id: z.string().min(1).max(128).optional(),
  task_type: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, "expected a task type name such as conversation")
    .optional(),
  message_delivery_mode: z.enum(["steering", "follow_up"]).optional(),
  wait: z.boolean().optional(),
  stream: z.boolean().optional(),
});

export function messageRoutes(services: Services): RouteSpec[] {
  const { chat } = services;
  return [
    defineRoute({
      method: "POST",
      url: "/api/message",
      summary: "Sends a user message: `wait: true` returns the reply, `stream: true` streams it as server-sent events",
      tag: "chat",
      body: messageBody,
      handler: async ({ body }, _request, reply) => {
        if (body.wait && body.stream)
          throw new AppError("invalid_request", "set wait or stream, not both", { field: "body.stream" });
        if (!body.wait && !body.stream) {
          throw new AppError(
            "invalid_request",
            "set wait: true for the whole reply or stream: true for tokens as they come",
            { field: "body.wait" },
          );
        }
        const aborted = new AbortController();
        let answered = false;
        reply.raw.on("close", () => {
          if (!answered) aborted.abort(new Error("client disconnected"));
        });
        const chatRequest = {
          message: body.message,
          signal: aborted.signal,
          ...(body.session_id ? { sessionId: body.session_id } : {}),
          ...(body.task_type ? { taskType: body.task_type } : {}),
        };
        if (body.wait) {
          const result = await chat.replyOnce(chatRequest);
          answered = true;
          return { task_id: null, ...result };
        }
        // Errors before the first event (unknown session, busy session, budget) keep their HTTP status.
        const events = chat.reply(chatRequest);
        const first = await events.next();
        reply.hijack();
        const out = reply.raw;
        openStreams.add(reply); // shutdown ends the stream, which cancels the model call
        out.writeHead(200, {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache, no-transform",
          "x-accel-buffering": "no",
        });
        const send = (event: string, data: unknown) => {
          if (!out.writableEnded) out.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
        };
        let text = "";
        let sessionId = body.session_id ?? "";
        try {
          for (let next = first; !next.done; next = await events.next()) {
            const event = next.value;
            switch (event.type) {
              case "start":
                sessionId = event.session_id;
                send("start", event);
                break;
              case "command":
                send("done", { session_id: event.session_id, reply: event.reply, command: true });
                break;
              case "route":
                send("route", event);
                break;
              case "text":
                text += event.delta;
                send("token", { delta: event.delta });
                break;
              case "reasoning":
                send("reasoning", { delta: event.delta });
                break;
              case "reset":
                text = "";
                send("reset", { reason: event.reason });
                break;
              case "tool_call":
                send("tool_call", event);
                break;
              case "finish":
                send("done", {
                  session_id: sessionId,
                  reply: text,
                  provider: event.provider,
                  model: event.model,
                  usage: event.usage,
                  cost_usd: event.costUsd,
                });
                break;
            }
          }
        } catch (error) {
          if (!aborted.signal.aborted) {
            const appError = isAppError(error) ? error : new AppError("internal", "the reply failed");
            if (!isAppError(error)) services.logger.error("chat stream failed", { error: (error as Error).message });
            send("error", errorBody(appError));
          }
        }
        answered = true;
        openStreams.delete(reply);
        out.end();
      },
    }),
  ];
}
