import type { Command } from "commander";
import { AppError } from "../util/errors.ts";
import { type CliContext, output } from "./context.ts";

// `assistant chat`: talk to the running daemon. With a message it answers once (streamed, or whole with --json);
// without one it is an interactive session that keeps its session id across turns. Lines starting with "/" are
// slash commands, answered by the daemon without the model.

interface ChatOptions {
  session?: string;
  taskType?: string;
  json?: boolean;
}

export function registerChatCommand(program: Command, ctx: CliContext): void {
  program
    .command("chat")
    .description("chat with the assistant: one question as arguments, or an interactive session without them")
    .argument("[message...]", "a question to answer once, then exit")
    .option("--session <id>", "continue this session")
    .option("--task-type <type>", "route as this task type instead of classifying the message")
    .option("--json", "one-shot only: print the whole reply as JSON")
    .action(async (words: string[], opts: ChatOptions) => {
      const { connectDaemon } = await import("./daemonClient.ts");
      const client = await connectDaemon(ctx, "there is nobody to chat with");
      const message = words.join(" ").trim();
      if (message) {
        await oneShot(ctx, client, message, opts);
        return;
      }
      if (opts.json) throw new AppError("invalid_request", '--json needs a message: assistant chat --json "question"');
      await interactive(ctx, client, opts);
    });
}

type Client = Awaited<ReturnType<typeof import("./daemonClient.ts").connectDaemon>>;

async function oneShot(ctx: CliContext, client: Client, message: string, opts: ChatOptions): Promise<void> {
  const { withDaemon } = await import("./daemonClient.ts");
  const body = {
    message,
    ...(opts.session ? { session_id: opts.session } : {}),
    ...(opts.taskType ? { task_type: opts.taskType } : {}),
  };
  if (opts.json) {
    const reply = await withDaemon("there is nobody to chat with", () => client.sendMessage(body));
    output(ctx, true, reply, () => "");
    return;
  }
  await streamReply(ctx, client, body);
}

/** Streams one reply to stdout; returns the session id the conversation continues in. */
async function streamReply(
  ctx: CliContext,
  client: Client,
  body: { message: string; session_id?: string; task_type?: string },
  signal?: AbortSignal,
): Promise<string | undefined> {
  const { withDaemon } = await import("./daemonClient.ts");
  let sessionId = body.session_id;
  let printed = false;
  await withDaemon("there is nobody to chat with", async () => {
    for await (const { event, data } of client.streamMessage(body, signal)) {
      if (event === "start") sessionId = String(data.session_id);
      else if (event === "token") {
        ctx.stdout.write(String(data.delta));
        printed = true;
      } else if (event === "reset") {
        ctx.stdout.write(`\n[the answer was cut off (${String(data.reason)}); trying again]\n`);
      } else if (event === "done") {
        sessionId = String(data.session_id);
        if (data.command === true) ctx.stdout.write(String(data.reply));
        ctx.stdout.write("\n");
        if (!printed && data.command !== true && String(data.reply) === "") ctx.stderr.write("(empty answer)\n");
      } else if (event === "error") {
        const error = (data as { error: { code: string; message: string; details?: Record<string, unknown> } }).error;
        ctx.stdout.write(printed ? "\n" : "");
        const { ApiError } = await import("@assistant/client");
        throw new ApiError(error.code, error.message, 502, error.details);
      }
    }
  });
  return sessionId;
}

async function interactive(ctx: CliContext, client: Client, opts: ChatOptions): Promise<void> {
  const { createInterface } = await import("node:readline/promises");
  const tty = ctx.stdin.isTTY === true;
  const rl = createInterface({
    input: ctx.stdin,
    ...(tty ? { output: ctx.stdout, terminal: true } : { terminal: false }),
  });
  if (tty) ctx.stdout.write("Chat with the assistant. /help lists commands, /exit or Ctrl-D leaves.\n");
  let sessionId = opts.session;
  let current: AbortController | undefined;
  rl.on("SIGINT", () => {
    if (current)
      current.abort(); // Ctrl-C stops the answer, not the chat
    else rl.close();
  });
  const lines = rl[Symbol.asyncIterator]();
  try {
    for (;;) {
      if (tty) {
        rl.setPrompt("you> ");
        rl.prompt();
      }
      const next = await lines.next();
      if (next.done) break;
      const message = next.value.trim();
      if (!message) continue;
      if (message === "/exit" || message === "/quit") break;
      current = new AbortController();
      try {
        sessionId = await streamReply(
          ctx,
          client,
          {
            message,
            ...(sessionId ? { session_id: sessionId } : {}),
            ...(opts.taskType ? { task_type: opts.taskType } : {}),
          },
          current.signal,
        );
      } catch (error) {
        if (current.signal.aborted) ctx.stdout.write("\n[stopped]\n");
        else if (error instanceof AppError)
          ctx.stderr.write(`error: ${error.message}\n`); // the chat goes on
        else throw error;
      } finally {
        current = undefined;
      }
    }
  } finally {
    rl.close();
  }
}
