import { useMessages } from "./i18n.ts";

/** Without a session: how to get one. The page never asks for the API token. */
export function SignIn() {
  const t = useMessages();
  return (
    <section className="notice" aria-labelledby="sign-in">
      <h1 id="sign-in">{t.signInTitle}</h1>
      <p>{t.signInBody}</p>
      <pre>
        <code>assistant open</code>
      </pre>
      <p>{t.signInAfter}</p>
    </section>
  );
}

export function Unreachable() {
  const t = useMessages();
  return (
    <section className="notice" aria-labelledby="unreachable">
      <h1 id="unreachable">{t.unreachableTitle}</h1>
      <p>{t.unreachableBody}</p>
    </section>
  );
}
