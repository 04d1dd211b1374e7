import { type ReactNode, useId } from "react";

/**
 * A labelled control: the label names only the control (a label wrapped around a select would add the selected
 * option to its accessible name).
 */
export function Field({ label, children }: { label: string; children: (id: string) => ReactNode }) {
  const id = useId();
  return (
    <span className="field">
      <label htmlFor={id}>{label}</label> {children(id)}
    </span>
  );
}
