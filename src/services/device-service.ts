/**
 * DeviceService: devices sign in (password or pairing code) and manage their own channel and
 * topic filter with their device credential; the owner lists, renames and removes them.
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { QuietHours as QuietHoursMessage } from "../../gen/herald/v1/device_pb.ts";
import type { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { NotifyRequestSchema } from "../../gen/herald/v1/notify_service_pb.ts";
import type {
  AccountRepository,
  CredentialVerifier,
  DeviceRepository,
  NotificationRepository,
  PairingCodeRepository,
  ProjectRepository,
} from "../db/index.ts";
import { privateAddressProblem } from "../delivery/senders/push-address.ts";
import type { LoginLimiter } from "../domain/login-limiter.ts";
import { recordOf } from "../domain/notification.ts";
import { pushEndpointProblem } from "../domain/push-endpoint.ts";
import { knownTimeZone, minutesOf, type QuietHours } from "../domain/quiet-hours.ts";
import { storedTopicFilter } from "../domain/topic-filter.ts";
import { formatUserCode } from "../domain/user-codes.ts";
import { heraldError } from "../errors.ts";
import { deviceToProto } from "./mappers.ts";
import { authenticatePassword, checkCode } from "./password-auth.ts";
import { principalOf } from "./scope.ts";

const apnsToken = /^[0-9a-fA-F]{64,200}$/;
const fcmToken = /^[A-Za-z0-9:_\-.]{8,4096}$/;

export interface DeviceDeps {
  devices: DeviceRepository;
  pairingCodes: PairingCodeRepository;
  notifications: NotificationRepository;
  /** Wakes the worker and live streams after a test notification was committed. */
  onEnqueued: (notificationId: string) => void;
  accounts: AccountRepository;
  projects: ProjectRepository;
  credentials: CredentialVerifier;
  limiter: LoginLimiter;
  /** The VAPID public key browsers subscribe with; undefined when Web Push is not configured. */
  webPushPublicKey: string | undefined;
  /** Where Web Push endpoints may point (config: webPushHosts, webPushAllowPrivate). */
  webPushEndpoints: { hosts: readonly string[]; allowPrivate: boolean };
}

/** The request's quiet hours, checked (the proto's rules checked their shape). */
function quietHoursFrom(q: QuietHoursMessage | undefined): QuietHours | null {
  if (!q) return null;
  const violation = (field: string, message: string) =>
    heraldError("invalid_argument", `invalid request: ${field}`, {
      violations: [{ field, message }],
    });
  if (!knownTimeZone(q.timeZone)) {
    throw violation("quiet_hours.time_zone", "is not an IANA time zone (e.g. Europe/Paris)");
  }
  if (q.start === q.end) throw violation("quiet_hours.end", "must differ from start");
  return { timeZone: q.timeZone, start: minutesOf(q.start), end: minutesOf(q.end) };
}

export function createDeviceService(deps: DeviceDeps): ServiceImpl<typeof DeviceService> {
  const { devices, pairingCodes, notifications, onEnqueued, accounts, projects } = deps;
  const { credentials, limiter } = deps;
  const self = async (accountId: string, id: string) => {
    const device = await devices.get(accountId, id);
    if (!device) throw heraldError("unauthenticated", "this device is signed out");
    return device;
  };
  const invalid = (field: string, message: string) =>
    heraldError("invalid_argument", `invalid request: ${field}`, {
      violations: [{ field, message }],
    });

  return {
    async getWebPushKey() {
      if (!deps.webPushPublicKey) {
        throw heraldError("failed_precondition", "Web Push is not configured on this server");
      }
      return { publicKey: deps.webPushPublicKey };
    },

    async signInDevice(req, ctx) {
      let accountId: string | undefined;
      if (req.method.case === "password") {
        const { email, password } = req.method.value;
        const account = await authenticatePassword({ accounts, limiter }, ctx, email, password);
        accountId = account.id;
      } else if (req.method.case === "pairingCode") {
        const code = req.method.value;
        accountId = await checkCode(
          limiter,
          ctx,
          () => pairingCodes.consume(code),
          (a) => !a,
        );
        if (!accountId)
          throw heraldError("unauthenticated", "unknown, used or expired pairing code");
      }
      if (!accountId) throw invalid("method", "give a password or a pairing code");
      const { credential, device } = await devices.create(accountId, req.name, req.platform);
      return { deviceCredential: credential, device: deviceToProto(device) };
    },

    async createPairingCode(_req, ctx) {
      const { code, expiresAt } = await pairingCodes.create(principalOf(ctx).accountId);
      return { code: formatUserCode(code), expiresAt: timestampFromDate(expiresAt) };
    },

    async registerChannel(req, ctx) {
      const p = principalOf(ctx);
      const device = await self(p.accountId, p.credentialId);
      let token: string;
      let last4: string | undefined;
      if (device.platform === "stream") {
        throw heraldError("failed_precondition", "a stream device has no push channel: subscribe");
      } else if (device.platform === "web") {
        if (req.channel.case !== "webPush")
          throw invalid("web_push", "is required for a web device");
        const { endpoint, p256dh, auth } = req.channel.value;
        const { hosts, allowPrivate } = deps.webPushEndpoints;
        const why =
          pushEndpointProblem(endpoint, hosts, allowPrivate) ??
          (allowPrivate ? undefined : await privateAddressProblem(new URL(endpoint).hostname));
        if (why) throw invalid("web_push.endpoint", why);
        token = JSON.stringify({ endpoint, keys: { p256dh, auth } });
        last4 = endpoint.slice(-4);
      } else {
        if (req.channel.case !== "pushToken") throw invalid("push_token", "is required");
        const ok = device.platform === "ios" ? apnsToken : fcmToken;
        if (!ok.test(req.channel.value)) {
          throw invalid(
            "push_token",
            device.platform === "ios"
              ? "must be an APNs device token (hex)"
              : "must be an FCM token",
          );
        }
        token = req.channel.value;
      }
      return { device: deviceToProto(await devices.registerChannel(device.id, token, last4)) };
    },

    async setTopicFilter(req, ctx) {
      const p = principalOf(ctx);
      // A device sets its own (`id` empty or its own); a CLI token any device of the account.
      const itself = p.kind === "device";
      if (!itself && req.id === "") throw invalid("id", "must name the device");
      const id = itself ? p.credentialId : req.id;
      // A device naming another sets nothing (and learns nothing of it).
      const another = req.id !== "" && req.id !== id;
      const device = another
        ? null
        : await devices.setTopics(p.accountId, id, storedTopicFilter(req.topics), itself);
      if (device) return { device: deviceToProto(device) };
      if (itself && !another) throw heraldError("unauthenticated", "this device is signed out");
      throw heraldError("not_found", `device ${req.id} not found`);
    },

    async signOutDevice(_req, ctx) {
      const p = principalOf(ctx);
      await devices.signOut(p.accountId, p.credentialId);
      credentials.forget(p.credentialId);
      return {};
    },

    async listDevices(_req, ctx) {
      return { devices: (await devices.list(principalOf(ctx).accountId)).map(deviceToProto) };
    },

    async setQuietHours(req, ctx) {
      const p = principalOf(ctx);
      // A device sets its own; a CLI token any device of the account.
      const mine = p.kind !== "device" || req.id === p.credentialId;
      const device = mine
        ? await devices.setQuietHours(p.accountId, req.id, quietHoursFrom(req.quietHours))
        : null;
      if (!device) throw heraldError("not_found", `device ${req.id} not found`);
      return { device: deviceToProto(device) };
    },

    async renameDevice(req, ctx) {
      const device = await devices.rename(principalOf(ctx).accountId, req.id, req.name);
      if (!device) throw heraldError("not_found", `device ${req.id} not found`);
      return { device: deviceToProto(device) };
    },

    async sendTestNotification(req, ctx) {
      const { accountId } = principalOf(ctx);
      const device = await devices.get(accountId, req.id);
      if (!device) throw heraldError("not_found", `device ${req.id} not found`);
      const project = await projects.defaultOf(accountId);
      const request = create(NotifyRequestSchema, {
        topic: "herald-test",
        title: "Herald test notification",
        message: `If you can read this, ${device.name} receives Herald notifications.`,
      });
      const record = recordOf(request, project.id, new Date(), {
        escalateProjectId: null,
        scale: 1,
      });
      await notifications.enqueueDirect(record, device);
      onEnqueued(record.id);
      return { notificationId: record.id };
    },

    async removeDevice(req, ctx) {
      if (!(await devices.signOut(principalOf(ctx).accountId, req.id))) {
        throw heraldError("not_found", `device ${req.id} not found`);
      }
      credentials.forget(req.id);
      return {};
    },
  };
}
