import type { ComponentProps } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import { CopyButton } from "./CopyButton.tsx";
import { useMessages } from "./i18n.ts";

// Model output as Markdown. react-markdown never renders raw HTML (a <script> or <img onerror> in an answer shows
// as text) and its URL filter drops javascript: and other unsafe links; links open without a referrer or opener.
const components: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noopener noreferrer" />,
  img: ({ alt }) => <span>{alt ? `[${alt}]` : ""}</span>,
};

/** A hast node's text (a code block's source, for its copy button). */
interface HastNode {
  type: string;
  value?: string;
  children?: HastNode[];
}
function textOf(node: HastNode | undefined): string {
  if (!node) return "";
  return node.type === "text" ? (node.value ?? "") : (node.children ?? []).map(textOf).join("");
}

function CodeBlock({ node, children, ...props }: ComponentProps<"pre"> & { node?: unknown }) {
  const t = useMessages();
  return (
    <div className="code-block">
      <CopyButton text={textOf(node as HastNode)} label={t.copyCode} />
      <pre {...props}>{children}</pre>
    </div>
  );
}

const withCopy: Components = { ...components, pre: CodeBlock };

/** `copyCode` puts a copy button on each code block. */
export function Markdown({ text, copyCode = false }: { text: string; copyCode?: boolean }) {
  return (
    <ReactMarkdown skipHtml={false} components={copyCode ? withCopy : components}>
      {text}
    </ReactMarkdown>
  );
}
