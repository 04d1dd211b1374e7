import type { AssistantClient, TaskStreamMessage } from "@assistant/client";
import type { Command } from "commander";
import { firstContentLine } from "../tools/output.ts";
import { AppError } from "../util/errors.ts";
import { type CliContext, output } from "./context.ts";
import { taskTypeArgument } from "./taskTypeOption.ts";

// `assistant chat`: talk to the running daemon. With a message it answers once (streamed, or whole with --json);
// without one it is an interactive session that keeps its session id across turns. Lines starting with "/" are
// slash commands, answered by the daemon without the model. Tool calls and results are shown as dim lines; when a
// call needs approval, the interactive session shows its arguments and asks `Approve <tool>? [y/N/always]` (the
// next input line answers, also when stdin is piped; always also records a persistent allow) and a one-shot
// question prints the command that approves it. When a route target failed, one line on stderr names it and who
// answered instead (docs/models.md#when-a-model-fails); a one-shot question that only the built-in core answered
// exits 1.

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
    .option("--task-type <type>", "route as this task type instead of classifying the message", taskTypeArgument)
    .option("--json", "one-shot only: print the whole reply as JSON")
    .action(async (words: string[], opts: ChatOptions, command: Command) => {
      const message = words.join(" ").trim();
      if (!message && opts.json) command.error('error: --json needs a message: assistant chat --json "question"');
      const { connectDaemon } = await import("./daemonClient.ts");
      const client = await connectDaemon(ctx, "there is nobody to chat with");
      if (message) {
        await oneShot(ctx, client, message, opts);
        return;
      }
      await interactive(ctx, client, opts);
    });
}

type Client = AssistantClient;

async function oneShot(ctx: CliContext, client: Client, message: string, opts: ChatOptions): Promise<void> {
  const body = {
    message,
    ...(opts.session ? { session_id: opts.session } : {}),
    ...(opts.taskType ? { task_type: opts.taskType } : {}),
  };
  // Ctrl-C while it waits (for the model, for an approval) closes the stream, which cancels the task in the
  // daemon; then the process ends as Ctrl-C ends it.
  const interrupted = new AbortController();
  const interrupt = () => interrupted.abort();
  process.once("SIGINT", interrupt);
  let reply: StreamResult;
  try {
    reply = await streamReply(ctx, client, body, { json: opts.json === true, signal: interrupted.signal });
  } catch (error) {
    if (!interrupted.signal.aborted) throw error;
    process.kill(process.pid, "SIGINT"); // nobody listens any more: the exit status says "interrupted"
    return;
  } finally {
    process.off("SIGINT", interrupt);
  }
  const { done, fallbacks } = reply;
  if (opts.json && done) output(ctx, true, { ...done, fallbacks }, () => "");
  const notice = done ? fallbackNotice(fallbacks, done) : undefined;
  if (done && "provider" in done && done.provider === CORE) {
    // The built-in core is no model: a script asking a question must see that nothing answered it.
    throw new AppError("provider_unavailable", `no model answered${notice ? `: ${notice}` : ""}`);
  }
  if (notice) ctx.stderr.write(`${notice}\n`);
}

type Done = Extract<TaskStreamMessage, { event: "done" }>["data"];
type Fallback = Extract<TaskStreamMessage, { event: "fallback" }>["data"];

const CORE = "assistant_core";

/**
 * One line naming each target that failed and who answered instead, e.g. `lowbit_server/fake-7b failed: cannot
 * connect to 127.0.0.1:18080 (ECONNREFUSED: nothing listens there); answered by assistant_core`. Undefined when
 * nothing failed or no model call was made (a slash command).
 */
export function fallbackNotice(fallbacks: Fallback[], done: Done): string | undefined {
  if (fallbacks.length === 0 || !("provider" in done) || !done.provider) return undefined;
  // Each round of a tool loop tries the route again: name a target once, with its latest reason.
  const latest = new Map(fallbacks.map((f) => [`${f.provider}/${f.model}`, f.reason]));
  const failed = [...latest].map(([target, reason]) => `${target} failed: ${reason}`);
  const by = done.provider === CORE ? CORE : `${done.provider}/${done.model}`;
  return `${failed.join("; ")}; answered by ${by}`;
}

/** Asks one question and resolves with the answer line, or undefined when the input ended. */
export type Ask = (question: string) => Promise<string | undefined>;

/** Dim text on a terminal (unless NO_COLOR), plain text otherwise. */
function dim(ctx: CliContext, text: string): string {
  const tty = (ctx.stdout as { isTTY?: boolean }).isTTY === true;
  return tty && !ctx.env.NO_COLOR ? `\x1b[2m${text}\x1b[22m` : text;
}

function short(text: string, max = 80): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max)}...` : line;
}

/** `y` / `yes` (any case) approves; anything else, an empty line or the end of input, denies. */
export function isYes(answer: string | undefined): boolean {
  return /^\s*y(es)?\s*$/i.test(answer ?? "");
}

/** `always` / `a` (any case): approve, and let the same tool on the same scope run without asking from now on. */
export function isAlways(answer: string | undefined): boolean {
  return /^\s*a(lways)?\s*$/i.test(answer ?? "");
}

/**
 * A tool call waiting for approval: shows what it would do (its arguments, what it would replace), then with
 * `ask` asks `Approve <tool>? [y/N/always]` and approves (`always`: and records a persistent allow for the tool and
 * what it asked about) or denies the queue item; without, prints the commands that do it. Returns what was done.
 */
export async function handleApproval(
  ctx: Pick<CliContext, "stdout" | "stderr">,
  client: Pick<Client, "approveQueueItem" | "denyQueueItem" | "getQueueItem">,
  data: Extract<TaskStreamMessage, { event: "approval_requested" }>["data"],
  ask: Ask | undefined,
): Promise<"approved" | "denied" | "shown" | "failed"> {
  const itemId = data.queue_item_id;
  const tool = data.tool;
  const { withDaemon } = await import("./daemonClient.ts");
  ctx.stdout.write(`approval needed: ${tool} (rule: ${data.rule}, queue item ${itemId})\n`);
  let scope: string | null = null;
  try {
    const item = await withDaemon(`item ${itemId} cannot be read`, () => client.getQueueItem(itemId));
    scope = item.scope;
    ctx.stdout.write(`  arguments: ${short(item.arguments_summary, 200)}\n`);
    if (item.notice) ctx.stdout.write(`  note: this ${item.notice}\n`);
  } catch (error) {
    ctx.stderr.write(`error: ${(error as Error).message}\n`);
    return "failed";
  }
  const always = scope === null ? "" : ` (always: ${tool} on ${scope} from now on)`;
  if (!ask) {
    ctx.stdout.write(
      `approve it with \`assistant permissions queue approve ${itemId}\`${scope === null ? "" : " [--always]"} or deny it with \`assistant permissions queue deny ${itemId}\`\n`,
    );
    return "shown";
  }
  const answer = await ask(`Approve ${tool}?${always} [y/N${scope === null ? "" : "/always"}] `);
  const forever = scope !== null && isAlways(answer);
  const action = isYes(answer) || forever ? "approve" : "deny";
  try {
    await withDaemon(`item ${itemId} cannot be changed`, () =>
      action === "approve"
        ? client.approveQueueItem(itemId, forever ? { always: true } : {})
        : client.denyQueueItem(itemId, {}),
    );
  } catch (error) {
    ctx.stderr.write(`error: ${(error as Error).message}\n`); // expired or resolved elsewhere: the chat goes on
    return "failed";
  }
  const done = action === "approve" ? "approved" : "denied";
  ctx.stdout.write(
    forever ? `${done} ${tool}; from now on ${tool} on ${scope} runs without asking\n` : `${done} ${tool}\n`,
  );
  return done;
}

interface StreamOptions {
  signal?: AbortSignal;
  ask?: Ask;
  /** --json: nothing but the final JSON goes to stdout; an approval request is shown on stderr. */
  json?: boolean;
}

interface StreamResult {
  taskId: string | undefined;
  sessionId: string | undefined;
  done: Done | undefined;
  fallbacks: Fallback[];
}

/** Streams one reply to stdout; returns the session id the conversation continues in and how it ended. */
async function streamReply(
  ctx: CliContext,
  client: Client,
  body: { message: string; session_id?: string; task_type?: string },
  options: StreamOptions = {},
): Promise<StreamResult> {
  const { withDaemon } = await import("./daemonClient.ts");
  const { signal, ask } = options;
  const result: StreamResult = { taskId: undefined, sessionId: body.session_id, done: undefined, fallbacks: [] };
  const stdout = options.json ? { write: (_text: string) => true } : ctx.stdout;
  const out = options.json ? { stdout: ctx.stderr, stderr: ctx.stderr } : ctx;
  let printed = false;
  let midLine = false; // tokens were written without a newline yet
  const line = (text: string) => {
    stdout.write(`${midLine ? "\n" : ""}${text}\n`);
    midLine = false;
  };
  const streaming = withDaemon("there is nobody to chat with", async () => {
    for await (const { event, data } of client.sendMessageStream(body, signal ? { signal } : {})) {
      if (event === "start") {
        result.taskId = data.task_id;
        result.sessionId = data.session_id;
      } else if (event === "fallback") result.fallbacks.push(data);
      else if (event === "token") {
        const delta = data.delta;
        stdout.write(delta);
        printed = true;
        if (delta) midLine = !delta.endsWith("\n");
      } else if (event === "tool_call") {
        const args = data.arguments === null ? "(invalid arguments)" : JSON.stringify(data.arguments ?? {});
        line(dim(ctx, `  tool_call ${data.name} ${short(args)}`));
      } else if (event === "tool_result") {
        const first = firstContentLine(data.output);
        line(dim(ctx, `  tool_result ${data.name} ${data.status}${first ? `: ${short(first)}` : ""}`));
      } else if (event === "approval_requested") {
        if (midLine) line("");
        await handleApproval(out, client, data, ask);
      } else if (event === "reset") {
        stdout.write("\n[the answer was cut off; trying again]\n");
      } else if (event === "done") {
        midLine = false;
        const command = "command" in data;
        result.sessionId = data.session_id;
        result.done = data;
        if (command) stdout.write(data.reply);
        stdout.write("\n");
        if (!printed && !command && data.reply === "") ctx.stderr.write("(empty answer)\n");
      } else if (event === "error") {
        const { error } = data;
        stdout.write(printed ? "\n" : "");
        const { ApiError } = await import("@assistant/client");
        throw new ApiError(error.code, error.message, 502, error.details);
      }
    }
  });
  try {
    await streaming;
  } catch (error) {
    // Closing the stream cancels the task in the daemon (a call it left waiting for approval expires with it).
    if (signal?.aborted && result.taskId)
      ctx.stderr.write(`${midLine ? "\n" : ""}stopped: task ${result.taskId} is cancelled\n`);
    throw error;
  }
  return result;
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
  // An approval question is answered by the next input line, read from the same stream as the messages.
  const ask: Ask = async (question) => {
    if (tty) {
      rl.setPrompt(question);
      rl.prompt();
    } else ctx.stdout.write(question);
    const answer = await lines.next();
    if (!tty) ctx.stdout.write("\n");
    return answer.done ? undefined : answer.value;
  };
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
        const reply = await streamReply(
          ctx,
          client,
          {
            message,
            ...(sessionId ? { session_id: sessionId } : {}),
            ...(opts.taskType ? { task_type: opts.taskType } : {}),
          },
          { signal: current.signal, ask },
        );
        sessionId = reply.sessionId;
        const notice = reply.done ? fallbackNotice(reply.fallbacks, reply.done) : undefined;
        if (notice) ctx.stderr.write(`${dim(ctx, notice)}\n`);
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
