import { useEffect, useMemo, useRef, useState } from "react";
import { coalesce } from "../coalesce.ts";

// Live data by polling: loads now and whenever `key` changes (what is loaded: a task id, a filter), then every
// `intervalMs` while `active`; `reload` loads again at once (after an action). A load that fails keeps the last
// data and reports the error (an ApiError from the client carries the daemon's message).

export interface Polled<T> {
  data: T | undefined;
  error: Error | undefined;
  reload: () => Promise<void>;
}

export function usePolling<T>(load: () => Promise<T>, key: string, intervalMs: number, active = true): Polled<T> {
  const [data, setData] = useState<T | undefined>();
  const [error, setError] = useState<Error | undefined>();
  const latest = useRef(load);
  latest.current = load;
  const generation = useRef(0);

  // Coalesced: live events arriving while a load runs cost one more load, not one each.
  const reload = useMemo(
    () =>
      coalesce(async () => {
        const mine = generation.current;
        try {
          const value = await latest.current();
          if (mine !== generation.current) return;
          setData(value);
          setError(undefined);
        } catch (caught) {
          if (mine !== generation.current) return;
          setError(caught instanceof Error ? caught : new Error(String(caught)));
        }
      }),
    [],
  );

  useEffect(() => {
    generation.current += 1;
    setData(undefined);
    setError(undefined);
    if (key !== "") void reload();
  }, [key, reload]);

  useEffect(() => {
    if (!active) return;
    const timer = window.setInterval(() => void reload(), intervalMs);
    return () => window.clearInterval(timer);
  }, [reload, intervalMs, active]);

  return { data, error, reload };
}
