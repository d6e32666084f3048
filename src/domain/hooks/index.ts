/** An inbound hook's call read by its kind: what it becomes (a notification, or nothing). */
import { readAlertmanager, readGrafana } from "./alert-group.ts";
import { readEmail } from "./email.ts";
import type { HookCall, HookKind, HookOutcome } from "./event.ts";
import { readGeneric } from "./generic.ts";
import { readGitHub } from "./github.ts";
import { readGitLab } from "./gitlab.ts";
import type { HookTemplateText } from "./template.ts";

export function readHookCall(
  kind: HookKind,
  call: HookCall,
  template: HookTemplateText | null,
): HookOutcome {
  switch (kind) {
    case "github":
      return readGitHub(call);
    case "gitlab":
      return readGitLab(call);
    case "alertmanager":
      return readAlertmanager(call);
    case "grafana":
      return readGrafana(call);
    case "generic":
      return readGeneric(call, template);
    case "email":
      return readEmail(call);
  }
}

export { emailAddress, emailRecipient, type MailBody, mailDomainOf } from "./email.ts";
export {
  type HookCall,
  type HookKind,
  type HookOutcome,
  HookPayloadError,
  type HookPublish,
  hookKinds,
} from "./event.ts";
export { senderSnippet } from "./snippets.ts";
export { type HookTemplateText, templateFields, templateProblem } from "./template.ts";
export { authentic, type HookCredentials } from "./verify.ts";
