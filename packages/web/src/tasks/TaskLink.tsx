import type { ReactNode } from "react";
import { navigate, taskPath } from "./taskPaths.ts";

/** A real link to a task's detail (opens in a new tab with a modifier key), handled in place on a plain click. */
export function TaskLink({ id, children }: { id: string | undefined; children: ReactNode }) {
  const href = taskPath(id);
  return (
    <a
      href={href}
      onClick={(event) => {
        if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
        event.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}
