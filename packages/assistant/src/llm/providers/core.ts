import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import type { EmbeddedState, LanguageModelV4, Provider, ProviderFactory } from "../types.ts";

// assistant_core (model "core"): the last fallback, with no model behind it (docs/models.md). It never
// pretends to be a language model: it says plainly that none is available, why if it knows (the embedded
// model's state), how to get one, and answers help and status questions with the commands that answer them.

const PROVIDER = "assistant_core";
const MODEL = "core";

const HELP = /^\s*(\/help|\/\?|help|aide|\?)\s*$|\b(help|what can you do|how do i|commands?)\b/i;
const STATUS = /^\s*\/?(status|statut|état)\s*$|\b(status|are you (up|running|working)|is the model)\b/i;

export const createCoreProvider: ProviderFactory = (context): Provider => ({
  id: PROVIDER,
  local: true,
  async languageModel() {
    return coreModel(() => context.embedded.state());
  },
  callOptions() {
    return {};
  },
  async listModels() {
    return [{ provider: PROVIDER, model: MODEL, options: {} }];
  },
});

export function coreModel(embedded: () => EmbeddedState): LanguageModelV4 {
  const answer = (options: LanguageModelV4CallOptions) =>
    coreAnswer(lastUserText(options.prompt), embedded(), failedTargets(options));
  return {
    specificationVersion: "v4",
    provider: PROVIDER,
    modelId: MODEL,
    supportedUrls: {},
    async doGenerate(options) {
      return {
        content: [{ type: "text", text: answer(options) }],
        finishReason: { unified: "stop", raw: undefined },
        usage: ZERO_USAGE,
        warnings: [],
      };
    },
    async doStream(options) {
      // One delta per paragraph: the text is ready at once, but clients render it like any other stream.
      const paragraphs = answer(options).split(/(?<=\n\n)/);
      const parts: LanguageModelV4StreamPart[] = [
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "core" },
        ...paragraphs.map((delta): LanguageModelV4StreamPart => ({ type: "text-delta", id: "core", delta })),
        { type: "text-end", id: "core" },
        { type: "finish", finishReason: { unified: "stop", raw: undefined }, usage: ZERO_USAGE },
      ];
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}

const ZERO_USAGE: LanguageModelV4Usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

function lastUserText(prompt: LanguageModelV4Prompt): string {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i]!;
    if (message.role === "user") {
      return message.content.map((part) => (part.type === "text" ? part.text : "")).join(" ");
    }
  }
  return "";
}

/** A route target that failed before the core answered (the router passes them, router.ts). */
export interface FailedTarget {
  provider: string;
  model: string;
  reason: string;
}

function failedTargets(options: LanguageModelV4CallOptions): FailedTarget[] {
  const failed = options.providerOptions?.[PROVIDER]?.failed;
  if (!Array.isArray(failed)) return [];
  return failed.flatMap((entry) => {
    const { provider, model, reason } = (entry ?? {}) as Record<string, unknown>;
    return typeof provider === "string" && typeof model === "string" && typeof reason === "string"
      ? [{ provider, model, reason }]
      : [];
  });
}

/** What a person does about a provider that failed; the embedded model's line says it for that one. */
function fixFor(provider: string): string {
  switch (provider) {
    case "local_server":
      return "start Ollama (`ollama serve`) or run `assistant discover`";
    case "lowbit_server":
      return "start that server or run `assistant discover`";
    case "assistant_embedded":
      return "`/embedded` shows the embedded model";
    default:
      return "`assistant doctor` checks its key and whether it answers";
  }
}

/** The core's whole reply to `question`; `failed` names the targets the router tried before it. */
export function coreAnswer(question: string, embedded: EmbeddedState, failed: FailedTarget[] = []): string {
  const paragraphs: string[] = [];
  if (HELP.test(question)) {
    paragraphs.push(
      "Help: type `/help` for the list of commands. Chat commands start with `/` and work without a model, for example `/status`, `/embedded`, `/models` and `/newsession`.",
    );
  } else if (STATUS.test(question)) {
    paragraphs.push(
      "Status: the assistant is running, but no language model answered. `/status` shows the daemon and its providers, `/embedded` the embedded model.",
    );
  }
  // A provider the person configured failed: name it and its fix, not the steps they already took.
  const chosen = failed.filter((f) => f.provider !== "assistant_embedded");
  for (const f of chosen) paragraphs.push(`${f.provider}/${f.model} failed: ${f.reason}; ${fixFor(f.provider)}.`);
  paragraphs.push(
    `No language model is available right now, so the assistant's built-in core is answering. It cannot understand or write free text. ${embeddedLine(embedded)}`,
  );
  paragraphs.push(
    chosen.length > 0
      ? "`assistant doctor` checks every provider of every route and says how to fix each."
      : [
          "To get a model:",
          "- download the embedded local model: `assistant config models embedded-download`",
          "- or use a model server you run: `assistant discover` finds it and prints the command that sets it up",
          "- or a cloud provider: `assistant config provider add-cloud-a`",
        ].join("\n"),
  );
  paragraphs.push(
    "Useful commands: `/help` lists all commands, `/status` shows the daemon, `/embedded` the embedded model.",
  );
  return paragraphs.join("\n\n");
}

function embeddedLine(state: EmbeddedState): string {
  const name = `The embedded model (${state.model_id})`;
  switch (state.status) {
    case "downloading":
      return `${name} is downloading; it answers once the download completes (progress: \`/embedded\`).`;
    case "loading":
    case "calibrating":
      return `${name} is loading; try again in a moment.`;
    case "failed":
      return `${name} is unavailable: ${state.error ?? "it failed to load"}.`;
    default:
      return state.file_present
        ? `${name} is installed but did not answer; \`/embedded\` shows its state.`
        : `${name} is not downloaded yet.`;
  }
}
