/** @module @herald/client — the Node SDK for Herald. See docs/sdk.md. */
export { answerFields } from "./ask.ts";
export { HeraldError } from "./errors.ts";
export {
  type Answer,
  type AskInput,
  type AskOptions,
  Herald,
  type HeraldOptions,
  type ListFilter,
  type Notification,
  type NotifyInput,
  type NotifyOptions,
  type Priority,
} from "./herald.ts";
