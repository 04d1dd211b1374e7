import type { FastifyReply } from "fastify";
import type { LiveEvent, TaskService } from "../agent/taskService.ts";
import type { TaskRecord } from "../agent/tasks.ts";
import { AppError, isAppError } from "../util/errors.ts";
import { errorBody } from "./errors.ts";
import { openStreams } from "./sse.ts";

// A task's live progress as server-sent events (POST /api/message with stream: true): `start`, `route`, `token`,
// `reset`, `tool_call`, `tool_result`, `approval_requested`, `approval_resolved`, `steering_applied`, `state`,
// then `done` {task_id, session_id, status, reply} or `error`. Closing the connection cancels the task: the
// person watching stopped it.

/** How a finished task answers a chat client (wait: true, the stream's `done`). */
export function taskReply(task: TaskRecord) {
  return {
    task_id: task.id,
    session_id: task.session_id,
    status: task.status,
    reason: task.reason,
    task_type: task.task_type,
    reply: task.reply ?? "",
    provider: task.provider,
    model: task.model,
    usage: { input: task.input_tokens, output: task.output_tokens },
    cost_usd: task.cost_usd,
  };
}

export function streamTask(
  agent: TaskService,
  task: TaskRecord,
  reply: FastifyReply,
  classified: boolean,
): Promise<void> {
  reply.hijack();
  const out = reply.raw;
  openStreams.add(reply);
  out.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    "x-accel-buffering": "no",
  });
  const send = (event: string, data: unknown) => {
    if (!out.writableEnded) out.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  send("start", { task_id: task.id, session_id: task.session_id, task_type: task.task_type, classified });
  return new Promise<void>((resolve) => {
    let finished = false;
    const end = () => {
      if (finished) return;
      finished = true;
      unsubscribe();
      openStreams.delete(reply);
      out.end();
      resolve();
    };
    const onEvent = (event: LiveEvent) => {
      switch (event.type) {
        case "token":
          send("token", { delta: event.delta });
          break;
        case "done":
          break;
        case "turn":
          break;
        default: {
          const { type, ...data } = event;
          send(type, data);
        }
      }
    };
    const unsubscribe = agent.subscribe(task.id, onEvent);
    out.on("close", () => {
      if (finished) return;
      try {
        agent.cancel(task.id, "the client disconnected");
      } catch {
        // already finished
      }
      end();
    });
    agent.wait(task.id).then(
      (done) => {
        send("done", taskReply(done));
        end();
      },
      (error: unknown) => {
        send("error", errorBody(isAppError(error) ? error : new AppError("internal", "the task failed")));
        end();
      },
    );
  });
}
