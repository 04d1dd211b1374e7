import { useMessages } from "../i18n.ts";
import { type Appearance, AppearanceSettings, MemoryLearning, ProviderKeys } from "./OtherSettings.tsx";
import { ApprovalMode, Decisions } from "./Permissions.tsx";
import { ProfileForm } from "./ProfileForm.tsx";
import { ToolsPolicy } from "./ToolsPolicy.tsx";

/** Settings: who the assistant is, what it may do without asking, its keys, learning, language and theme. */
export function SettingsTab(appearance: Appearance) {
  const t = useMessages();
  return (
    <div className="tab settings">
      <h1>{t.setTitle}</h1>
      <ProfileForm />
      <ApprovalMode />
      <Decisions />
      <ToolsPolicy />
      <ProviderKeys />
      <MemoryLearning />
      <AppearanceSettings {...appearance} />
    </div>
  );
}
