import { estimateTokens } from "../llm/prices.ts";
import type { LanguageModelV4Prompt, TokenUsage } from "../llm/types.ts";
import type { Logger } from "../log/logger.ts";
import type { ToolCallStatus } from "../tools/tool.ts";

// ASSISTANT_AGENT_DEBUG=1: one info line per model request, model answer and tool call of a work unit, with
// sizes, decisions and timings. Never the text of a message, an answer, or a tool's arguments or output: those
// carry what the person said and can carry a secret the vault does not know; the logger redacts the rest.

export interface AgentDebugLog {
  /** A model request is about to be sent; the returned turn times it. */
  request(round: number, prompt: LanguageModelV4Prompt, tools: number): DebugTurn;
  /** What the policy and the operator decided about one tool call, and how long it took. */
  tool(round: number, call: { tool: string; status: ToolCallStatus; rule?: string; ms: number }): void;
}

export interface DebugTurn {
  /** The first chunk of the answer arrived. */
  chunk(): void;
  answered(answer: {
    provider: string | null;
    model: string | null;
    chars: number;
    toolCalls: number;
    usage: TokenUsage;
  }): void;
}

export function agentDebugLog(logger: Pick<Logger, "info">, taskId: string, taskType: string): AgentDebugLog {
  return {
    request(round, prompt, tools) {
      const serialised = JSON.stringify(prompt);
      logger.info("agent: model request", {
        task_id: taskId,
        task_type: taskType,
        round,
        messages: prompt.length,
        chars: serialised.length,
        estimated_tokens: estimateTokens(serialised),
        tools,
      });
      const started = performance.now();
      let firstChunkMs: number | null = null;
      return {
        chunk() {
          firstChunkMs ??= Math.round(performance.now() - started);
        },
        answered(answer) {
          logger.info("agent: model answer", {
            task_id: taskId,
            round,
            provider: answer.provider,
            model: answer.model,
            ms: Math.round(performance.now() - started),
            first_chunk_ms: firstChunkMs,
            chars: answer.chars,
            tool_calls: answer.toolCalls,
            tokens_in: answer.usage.input,
            tokens_out: answer.usage.output,
          });
        },
      };
    },
    tool(round, call) {
      logger.info("agent: tool call", {
        task_id: taskId,
        round,
        tool: call.tool,
        status: call.status,
        ...(call.rule ? { rule: call.rule } : {}),
        ms: Math.round(call.ms),
      });
    },
  };
}
