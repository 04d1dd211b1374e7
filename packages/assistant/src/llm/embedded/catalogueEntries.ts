// The built-in catalogue of embedded models (docs/models.md#the-embedded-model): the ids ASSISTANT_EMBEDDED_MODEL accepts and
// where each file comes from. URLs pin a Hugging Face revision so the file behind them cannot change under the
// recorded hash. Sizes and sha256 values were copied from public catalogues that pin the same revisions; they
// could not be checked against the live files from here. The download verifies both and refuses a mismatch (the
// previous model file stays in place), so a wrong value means a refused download, never a wrong model.

export interface CatalogueEntry {
  id: string;
  label: string;
  /** Hugging Face `resolve` URL of one GGUF file, pinned to a revision. */
  url: string;
  size_bytes: number;
  sha256: string;
  /** Context length the model was trained for (the runtime uses at most 8192 by default). */
  context_length: number;
  /** Chat template the GGUF ships and how node-llama-cpp handles it. */
  chat_template: string;
  license: string;
}

export const DEFAULT_EMBEDDED_MODEL = "qwen3_0_6b";

export const EMBEDDED_CATALOGUE: readonly CatalogueEntry[] = Object.freeze([
  {
    id: "qwen3_0_6b",
    label: "Qwen3 0.6B (Q8_0)",
    url: "https://huggingface.co/Qwen/Qwen3-0.6B-GGUF/resolve/23749fefcc72300e3a2ad315e1317431b06b590a/Qwen3-0.6B-Q8_0.gguf",
    size_bytes: 639_446_688,
    sha256: "9465e63a22add5354d9bb4b99e90117043c7124007664907259bd16d043bb031",
    context_length: 40_960,
    chat_template: "ChatML with <think> reasoning segments (QwenChatWrapper); thoughts are streamed as reasoning",
    license: "apache-2.0",
  },
  {
    id: "qwen2_5_0_5b",
    label: "Qwen2.5 0.5B Instruct (Q8_0)",
    url: "https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/9217f5db79a29953eb74d5343926648285ec7e67/qwen2.5-0.5b-instruct-q8_0.gguf",
    size_bytes: 675_710_816,
    sha256: "ca59ca7f13d0e15a8cfa77bd17e65d24f6844b554a7b6c12e07a5f89ff76844e",
    context_length: 32_768,
    chat_template: "ChatML (QwenChatWrapper), no reasoning segments",
    license: "apache-2.0",
  },
  {
    id: "smollm2_360m",
    label: "SmolLM2 360M Instruct (Q8_0)",
    url: "https://huggingface.co/HuggingFaceTB/SmolLM2-360M-Instruct-GGUF/resolve/593b5a2e04c8f3e4ee880263f93e0bd2901ad47f/smollm2-360m-instruct-q8_0.gguf",
    size_bytes: 386_404_992,
    sha256: "48ab3034d0dd401fbc721eb1df3217902fee7dab9078992d66431f09b7750201",
    context_length: 8192,
    chat_template: "ChatML (ChatMLChatWrapper); English only",
    license: "apache-2.0",
  },
  {
    id: "llama3_2_1b",
    label: "Llama 3.2 1B Instruct (Q4_K_M)",
    url: "https://huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF/resolve/067b946cf014b7c697f3654f621d577a3e3afd1c/Llama-3.2-1B-Instruct-Q4_K_M.gguf",
    size_bytes: 807_694_464,
    sha256: "6f85a640a97cf2bf5b8e764087b1e83da0fdb51d7c9fab7d0fece9385611df83",
    context_length: 131_072,
    chat_template: "Llama 3 header format (Llama3_2LightweightChatWrapper)",
    license: "llama3.2",
  },
]);

export function catalogueEntry(id: string): CatalogueEntry | undefined {
  return EMBEDDED_CATALOGUE.find((entry) => entry.id === id);
}
