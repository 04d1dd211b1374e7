import { useState } from "react";
import { errorText } from "../usePoll.ts";

/** One section's action state: the notice of what worked (role=status) or the daemon's refusal (role=alert). */
export function useAct(after?: () => Promise<void>) {
  const [notice, setNotice] = useState<string>();
  const [failure, setFailure] = useState<string>();
  async function act(run: () => Promise<string>): Promise<boolean> {
    setFailure(undefined);
    let ok = true;
    try {
      setNotice(await run());
    } catch (error) {
      setNotice(undefined);
      setFailure(errorText(error));
      ok = false;
    }
    await after?.();
    return ok;
  }
  return { notice, failure, act };
}

export function Outcome({ notice, failure }: { notice: string | undefined; failure: string | undefined }) {
  return (
    <>
      <p role="status" className="notice-line">
        {notice}
      </p>
      {failure && (
        <p role="alert" className="error">
          {failure}
        </p>
      )}
    </>
  );
}
