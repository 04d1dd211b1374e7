import { estimateTokens } from "../llm/prices.ts";
import type { LlmRouter } from "../llm/router.ts";
import type { Logger } from "../log/logger.ts";
import type { MessageRecord, SessionStore } from "./sessions.ts";

// Short-term history compaction (issue: never silent amnesia). When a session's summary plus unsummarised
// messages pass a share of ASSISTANT_MAX_CONTEXT_TOKENS, the older messages are folded into the summary through
// the `system` route, with an instruction to keep every fact, preference, name, number and decision the user
// gave. The newest messages stay verbatim. When no model can summarise (only assistant_core answers, or the
// call fails) nothing is folded: the prompt then carries the newest messages that fit, and the next turn tries
// again.

/** History may use this share of the context; the rest is the system prompt, tools, new message and reply. */
const HISTORY_SHARE = 0.5;
/** After compaction the verbatim tail uses at most this share. */
const TAIL_SHARE = 0.2;

const INSTRUCTION =
  "Summarise the conversation below for your own later use. Keep every fact, preference, name, number, date, " +
  "decision and open question the user stated, and what you promised to do; drop small talk. Write short " +
  "bullet points in the user's language. Output only the summary.";

export interface History {
  summary: string | null;
  messages: MessageRecord[];
}

export async function historyFor(
  deps: {
    sessions: SessionStore;
    router: Pick<LlmRouter, "complete">;
    logger?: Pick<Logger, "warn">;
    /** Runs before messages through `throughSeq` are folded (the memory flush), so nothing said is lost. */
    beforeFold?: (sessionId: string, throughSeq: number) => Promise<void>;
  },
  sessionId: string,
  maxTokens: number,
  signal?: AbortSignal,
): Promise<History> {
  const { sessions } = deps;
  let { summary, through } = sessions.summary(sessionId);
  let messages = sessions.after(sessionId, through);
  const budget = Math.floor(maxTokens * HISTORY_SHARE);
  const size = (list: MessageRecord[]) => list.reduce((n, m) => n + estimateTokens(m.content), 0);
  if (estimateTokens(summary ?? "") + size(messages) <= budget) return { summary, messages };

  // Keep the newest messages that fit the tail share verbatim; fold the rest.
  const tailBudget = Math.floor(maxTokens * TAIL_SHARE);
  let keepFrom = messages.length;
  let used = 0;
  while (keepFrom > 0 && used + estimateTokens(messages[keepFrom - 1]!.content) <= tailBudget) {
    keepFrom--;
    used += estimateTokens(messages[keepFrom]!.content);
  }
  const fold = messages.slice(0, keepFrom);
  if (fold.length > 0) {
    try {
      await deps.beforeFold?.(sessionId, fold.at(-1)!.seq);
    } catch (error) {
      if (signal?.aborted) throw error;
      deps.logger?.warn("the memory flush before compaction failed", {
        session_id: sessionId,
        error: (error as Error).message,
      });
    }
    const transcript = fold.map((m) => `${m.role}: ${m.content}`).join("\n");
    try {
      const result = await deps.router.complete({
        taskType: "system",
        prompt: [
          { role: "system", content: INSTRUCTION },
          {
            role: "user",
            content: [
              {
                type: "text",
                text: `${summary ? `Earlier summary:\n${summary}\n\n` : ""}Conversation:\n${transcript}`,
              },
            ],
          },
        ],
        sessionId,
        // A turn waits for its compaction: it is a step of that turn, never work left for later.
        priority: "tool",
        ...(signal ? { signal } : {}),
      });
      if (result.provider === "assistant_core" || !result.text.trim())
        throw new Error("no language model could summarise");
      summary = result.text.trim();
      through = fold.at(-1)!.seq;
      sessions.setSummary(sessionId, summary, through);
      messages = messages.slice(keepFrom);
    } catch (error) {
      if (signal?.aborted) throw error;
      deps.logger?.warn("history compaction failed; using the newest messages that fit", {
        session_id: sessionId,
        error: (error as Error).message,
      });
    }
  }
  // Whatever happened, never send more than the budget: the newest messages that fit.
  const kept: MessageRecord[] = [];
  let total = estimateTokens(summary ?? "");
  for (let i = messages.length - 1; i >= 0; i--) {
    total += estimateTokens(messages[i]!.content);
    if (kept.length > 0 && total > budget) break;
    kept.unshift(messages[i]!);
  }
  return { summary, messages: kept };
}
