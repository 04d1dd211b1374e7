import { ProviderFailure } from "./errors.ts";
import { toProviderFailure } from "./failure.ts";
import type { LanguageModelV4, LanguageModelV4CallOptions, TokenUsage } from "./types.ts";

// One call to one model, guarded by the three timeouts of docs/models.md#settings: the whole call, the wait for the
// first content chunk, and the gap between chunks. A timer aborts the provider's request, so a hung server
// costs no more than the limit. A stream that ends without a finish (connection cut) is a failure too.

export interface AttemptTimeouts {
  totalMs: number;
  firstChunkMs: number;
  idleMs: number;
}

export type AttemptPart =
  | { type: "text"; delta: string }
  | { type: "reasoning"; delta: string }
  | { type: "tool_call"; id: string; name: string; input: string }
  | { type: "finish"; usage: TokenUsage; finishReason: string; firstChunkMs: number };

const secs = (ms: number) => `${Math.round(ms) / 1000}s`;

export async function* runAttempt(
  model: LanguageModelV4,
  options: LanguageModelV4CallOptions,
  timeouts: AttemptTimeouts,
  signal?: AbortSignal,
): AsyncGenerator<AttemptPart> {
  const startedAt = performance.now();
  const totalEnd = startedAt + timeouts.totalMs;
  const controller = new AbortController();
  let timeout: ProviderFailure | undefined;
  let timer: NodeJS.Timeout | undefined;
  const arm = (ms: number, message: string) => {
    clearTimeout(timer);
    const remaining = totalEnd - performance.now();
    const total = remaining <= ms;
    timer = setTimeout(
      () => {
        timeout = new ProviderFailure(
          "timeout",
          total ? `no complete answer within ${secs(timeouts.totalMs)} (ASSISTANT_LLM_TIMEOUT_SECS)` : message,
        );
        controller.abort(timeout);
      },
      Math.max(0, Math.min(ms, remaining)),
    );
  };
  const forwardAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", forwardAbort, { once: true });
  if (signal?.aborted) forwardAbort();
  const aborted = new Promise<never>((_, reject) => {
    controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
  });
  aborted.catch(() => {}); // observed through the races below

  arm(timeouts.firstChunkMs, `no first chunk within ${secs(timeouts.firstChunkMs)} (ASSISTANT_LLM_FIRST_CHUNK_SECS)`);
  let reader: ReadableStreamDefaultReader<unknown> | undefined;
  let finished = false;
  try {
    const result = await Promise.race([model.doStream({ ...options, abortSignal: controller.signal }), aborted]);
    reader = result.stream.getReader() as ReadableStreamDefaultReader<unknown>;
    let firstChunkMs: number | undefined;
    const idleMessage = `the stream stalled for ${secs(timeouts.idleMs)} (ASSISTANT_LLM_STREAM_IDLE_SECS)`;
    const gotContent = () => {
      firstChunkMs ??= performance.now() - startedAt;
      arm(timeouts.idleMs, idleMessage);
    };
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), aborted]);
      if (done) break;
      const part = value as { type: string } & Record<string, unknown>;
      switch (part.type) {
        case "text-delta":
          gotContent();
          if (part.delta) yield { type: "text", delta: part.delta as string };
          break;
        case "reasoning-delta":
          gotContent();
          if (part.delta) yield { type: "reasoning", delta: part.delta as string };
          break;
        case "tool-call":
          gotContent();
          yield {
            type: "tool_call",
            id: part.toolCallId as string,
            name: part.toolName as string,
            input: part.input as string,
          };
          break;
        case "tool-input-start":
        case "tool-input-delta":
          gotContent();
          break;
        case "error":
          throw toProviderFailure(part.error);
        case "finish": {
          const reason = (part.finishReason as { unified: string }).unified;
          if (reason === "interrupted" || reason === "error") {
            throw new ProviderFailure("server", "the stream ended before the model finished (connection cut)");
          }
          const usage = part.usage as {
            inputTokens: { total: number | undefined };
            outputTokens: { total: number | undefined };
          };
          finished = true;
          yield {
            type: "finish",
            usage: { input: usage.inputTokens.total ?? 0, output: usage.outputTokens.total ?? 0 },
            finishReason: reason,
            firstChunkMs: firstChunkMs ?? performance.now() - startedAt,
          };
          break;
        }
        default:
          if (firstChunkMs !== undefined) arm(timeouts.idleMs, idleMessage); // pings keep an idle stream alive
      }
    }
    if (!finished) throw new ProviderFailure("server", "the stream ended before the model finished (connection cut)");
  } catch (error) {
    if (timeout) throw timeout;
    if (signal?.aborted) throw signal.reason;
    throw toProviderFailure(error);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", forwardAbort);
    if (!finished) reader?.cancel().catch(() => {});
    // Always settle `aborted`: a promise that never settles keeps every race reaction (and with it each chunk
    // and the request body) alive for as long as the HTTP client's finalizer holds the signal.
    controller.abort(new Error(finished ? "attempt finished" : "attempt abandoned"));
  }
}
