/**
 * The webhook event types an endpoint may subscribe to: the values the proto's rule on
 * `CreateWebhookEndpointRequest.event_types` admits (a unit test holds the two together), for
 * the console's checkboxes and the CLI's help.
 */
export const webhookEventTypes = [
  "notification.created",
  "notification.delivered",
  "notification.failed",
  "notification.expired",
  "notification.acknowledged",
  "notification.escalated",
  "notification.responded",
  "delivery.failed",
] as const;

export type WebhookEventType = (typeof webhookEventTypes)[number];
