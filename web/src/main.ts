/** The console's entry: its pages, and the first draw. */
import { show } from "./app.ts";
import { listenToServiceWorker, streamInPage } from "./browser-device.ts";
import "./pages/entry.ts";
import "./pages/notifications.ts";
import "./pages/devices.ts";
import "./pages/keys.ts";
import "./pages/webhooks.ts";
import "./pages/hooks.ts";
import "./pages/projects.ts";
import "./pages/account.ts";
import "./pages/approve.ts";
import "./pages/pair.ts";

addEventListener("popstate", () => void show());
listenToServiceWorker();
void streamInPage();
void show();
