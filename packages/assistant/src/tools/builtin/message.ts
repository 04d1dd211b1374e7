import { z } from "zod";
import { defineTool, ToolFailure } from "../tool.ts";

// message sends a short text to the user through their own webhook (ASSISTANT_MESSAGE_WEBHOOK_URL in
// assistant.env: a chat bridge, ntfy, a home automation hook...). The URL is user configuration, not subject to
// allowed_web_domains, and often holds a token itself, so it never appears in output or errors.

const TIMEOUT_MS = 10_000;
const NO_WEBHOOK = "no outbound message webhook: set ASSISTANT_MESSAGE_WEBHOOK_URL in assistant.env";

export const messageTool = defineTool({
  name: "message",
  description:
    "Send a short message to the user through their configured webhook (e.g. to their phone). Use it to notify " +
    "the user when something they asked for is done or needs them; not for ordinary answers.",
  resource: "none",
  parameters: z.strictObject({
    text: z.string().min(1).max(4000).describe("The message text"),
  }),
  async execute(args, ctx) {
    // An http(s) URL: the daemon refuses to start with anything else (config/envVariables.ts).
    const url = ctx.settings.messageWebhookUrl;
    if (!url) throw new ToolFailure(NO_WEBHOOK);
    const body = JSON.stringify({
      text: args.text,
      source: "assistant",
      task_id: ctx.taskId ?? null,
      session_id: ctx.sessionId ?? null,
      sent_at: new Date().toISOString(),
    });
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(TIMEOUT_MS)]);
    let res: Response;
    try {
      res = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body,
        redirect: "manual", // the message goes where the user configured, nowhere else
        signal,
      });
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      if (signal.aborted) throw new ToolFailure(`the message webhook did not answer within ${TIMEOUT_MS / 1000} s`);
      const cause = (error as { cause?: { code?: unknown } }).cause;
      const code = cause && typeof cause.code === "string" ? cause.code : "network error";
      throw new ToolFailure(`could not reach the message webhook (${code})`);
    }
    await res.body?.cancel().catch(() => {});
    if (res.status >= 200 && res.status < 300) return { text: "Message sent." };
    const redirect = res.status >= 300 && res.status < 400 ? "; redirects are not followed" : "";
    throw new ToolFailure(`the message webhook answered HTTP ${res.status}${redirect}; the message was not sent`);
  },
});
