/**
 * The webhook channel as a pi extension of its own: load it beside checkpoint-bridge
 * (`pi -e …/checkpoint-bridge/index.ts -e …/examples/webhook-channel/index.ts`) and set
 * WEBHOOK_CHANNEL_URL. Its code loads at the first claim the variable is set for.
 */
import { registerChannel } from "../../extensions/checkpoint-bridge/channels.ts";

/** The receiver's URL; the channel is configured while it is set. */
const URL_ENV = "WEBHOOK_CHANNEL_URL";
/** `<host>:<port>` the answer server listens on. @default 127.0.0.1:0 */
const LISTEN_ENV = "WEBHOOK_CHANNEL_LISTEN";
/** The origin answer URLs name, behind a proxy. @default the address it listens on */
const ORIGIN_ENV = "WEBHOOK_CHANNEL_ORIGIN";

const setting = (name: string) => process.env[name]?.trim() || undefined;

export default function webhookChannelExtension(): void {
	registerChannel({
		name: "webhook",
		configured: () => setting(URL_ENV) !== undefined,
		load: () =>
			import("./webhook-channel.ts").then((m) =>
				m.webhookChannel(() => ({ url: setting(URL_ENV) ?? "", listen: setting(LISTEN_ENV), origin: setting(ORIGIN_ENV) })),
			),
	});
}
