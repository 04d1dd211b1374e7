import ReactMarkdown, { type Components } from "react-markdown";

// Model output as Markdown. react-markdown never renders raw HTML (a <script> or <img onerror> in an answer shows
// as text) and its URL filter drops javascript: and other unsafe links; links open without a referrer or opener.
const components: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noopener noreferrer" />,
  img: ({ alt }) => <span>{alt ? `[${alt}]` : ""}</span>,
};

export function Markdown({ text }: { text: string }) {
  return (
    <ReactMarkdown skipHtml={false} components={components}>
      {text}
    </ReactMarkdown>
  );
}
