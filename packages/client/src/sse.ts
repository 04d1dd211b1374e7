// Server-sent events as the daemon writes them (docs/http-api.md#events): frames of `id:`, `event:` and `data:`
// lines ended by a blank line; lines starting with `:` are comments (keep-alives).

/** One frame: its `event` and `id` when it has them, and its data lines joined. */
export interface SseFrame {
  event?: string;
  id?: string;
  data: string;
}

/** Decodes an SSE byte stream into frames; comments, keep-alives and frames without data are skipped. */
export async function* parseSseFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    // A CR at the end may be the first half of a CRLF: normalise once the next chunk has come.
    if (!buffer.endsWith("\r")) buffer = buffer.replace(/\r\n?/g, "\n");
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const frame = parseFrame(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (frame) yield frame;
      end = buffer.indexOf("\n\n");
    }
  }
}

function parseFrame(text: string): SseFrame | undefined {
  const data: string[] = [];
  const frame: Omit<SseFrame, "data"> = {};
  for (const line of text.split("\n")) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + (line[colon + 1] === " " ? 2 : 1));
    if (field === "data") data.push(value);
    else if (field === "event") frame.event = value;
    else if (field === "id") frame.id = value;
  }
  return data.length > 0 ? { ...frame, data: data.join("\n") } : undefined;
}

/**
 * The stream's messages as its OpenAPI schema describes them: `{id?, event?, data}`, `data` parsed as JSON (kept
 * as text when it is not JSON, like the `[DONE]` that ends a chat completion stream).
 */
export async function* parseSseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  for await (const frame of parseSseFrames(body)) {
    let data: unknown;
    try {
      data = JSON.parse(frame.data);
    } catch {
      data = frame.data;
    }
    yield { ...frame, data };
  }
}

export interface SseMessage {
  event?: string;
  id?: string;
  data: unknown;
}
