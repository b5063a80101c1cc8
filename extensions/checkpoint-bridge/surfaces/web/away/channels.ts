/**
 * The page's ways to reach a phone, started with the page: the notify command and the built-in
 * ntfy, both fed by the board and the one-tap URLs; and the test notification of
 * `/checkpoints notify test`, whose "It works" press is reported at the host.
 */
import type { Board } from "../live/board.ts";
import { NOTIFY_AFTER_ENV, NOTIFY_COMMAND_ENV, NOTIFY_REMIND_ENV, NOTIFY_TIMEOUT_MS, Notifier, notifyDelay, runNotifyCommand } from "./notify-command.ts";
import { type NotifyLinks, ntfyActions, wireNotifications } from "./notify-life.ts";
import { NtfyChannel, type NtfyConfig, readNtfyConfig, wireNtfy } from "./ntfy.ts";
import type { OneTap } from "./one-tap.ts";

type Notice = (message: string, type: "info" | "warning") => void;

export interface ChannelOptions {
	/** The notify command, read for each relayed request. @default process.env.CHECKPOINT_BRIDGE_NOTIFY_COMMAND */
	notifyCommand?: () => string | undefined;
	/** @default NOTIFY_TIMEOUT_MS */
	notifyTimeoutMs?: number;
	/** How long a relayed request waits unanswered before it is notified, read for each request. @default process.env.CHECKPOINT_BRIDGE_NOTIFY_AFTER_MS, else 0 (at once) */
	notifyAfterMs?: () => number;
	/** How long after the first run a request still unanswered gets a reminder run; 0: none. @default process.env.CHECKPOINT_BRIDGE_NOTIFY_REMIND_MS, else 0 */
	notifyRemindMs?: () => number;
	/** Where to publish by ntfy; null: nowhere. @default from CHECKPOINT_BRIDGE_NTFY_URL and CHECKPOINT_BRIDGE_NTFY_TOKEN */
	ntfy?: NtfyConfig | null;
	/** ntfy's publish retries (tests shorten the wait). @default the channel's */
	ntfyRetryMs?: number;
	/** Where a problem (a command failing, a publish failing, a test pressed) is said. @default none */
	notice?: Notice;
}

/** The channels running for one page. */
export interface Channels {
	/** Sends a test notification through every channel set; what was sent, in words. */
	test(asker: string): Promise<string>;
	/** Stops both; resolves once every command's process group has ended. */
	close(): Promise<void>;
}

/** A notify delay read from the environment for each request; a problem with its value is said once per value, not once per request. */
function delayFromEnv(name: string, notice: Notice | undefined): () => number {
	let said: string | undefined;
	return () => {
		const delay = notifyDelay(process.env, name);
		if (delay.problem && delay.problem !== said) notice?.(`checkpoint-bridge: ${delay.problem}`, "warning");
		said = delay.problem;
		return delay.ms;
	};
}

/** The ntfy channel the options or the environment ask for; a wrong setting leaves it off (the host says so at the claim). */
function ntfyOf(options: ChannelOptions): NtfyChannel | undefined {
	const read = options.ntfy === undefined ? readNtfyConfig() : undefined;
	const config = options.ntfy ?? (read?.ok ? read.config : undefined);
	if (!config) return undefined;
	return new NtfyChannel(config, {
		warn: (message) => options.notice?.(message, "warning"),
		...(options.ntfyRetryMs === undefined ? {} : { retryMs: options.ntfyRetryMs }),
	});
}

/** Starts the notify command's runner and ntfy on the board's changes. */
export function startChannels(board: Board, oneTap: OneTap, links: NotifyLinks, options: ChannelOptions): Channels {
	const { notice } = options;
	const delayMs = options.notifyAfterMs ?? delayFromEnv(NOTIFY_AFTER_ENV, notice);
	const command = options.notifyCommand ?? (() => process.env[NOTIFY_COMMAND_ENV]);
	const notifier = new Notifier({
		command,
		delayMs,
		remindMs: options.notifyRemindMs ?? delayFromEnv(NOTIFY_REMIND_ENV, notice),
		timeoutMs: options.notifyTimeoutMs ?? NOTIFY_TIMEOUT_MS,
		onFailure: (reason) => notice?.(`checkpoint-bridge: the notify command failed (${reason}); the request is unaffected`, "warning"),
	});
	const unwire = wireNotifications(board, notifier, oneTap, links);
	const ntfy = ntfyOf(options);
	const unwireNtfy = ntfy ? wireNtfy(board, oneTap, links, ntfy, { delayMs }) : () => {};
	const tests = new Set<ReturnType<typeof runNotifyCommand>>();
	return {
		async test(asker) {
			const script = command()?.trim();
			if (!ntfy && !script)
				return "checkpoint-bridge: no notification is set: set CHECKPOINT_BRIDGE_NTFY_URL (ntfy) or CHECKPOINT_BRIDGE_NOTIFY_COMMAND, then /checkpoints notify test";
			const url = `${links.origin}${oneTap.testButton(asker, () =>
				notice?.(`checkpoint-bridge: the test notification's "It works" was pressed: a tap from your phone reaches this host`, "info"),
			)}`;
			const button = { label: "It works", answer: url };
			const sent: string[] = [];
			if (ntfy) {
				const title = "checkpoint-bridge: a test notification";
				const message = `Press "It works": the terminal says so when the tap arrives.\n${url}`;
				const actions = [{ action: "http" as const, label: "It works", url, method: "POST" as const, clear: true as const }];
				const ok = await ntfy.publish({ topic: ntfy.config.topic, title, message, click: url, actions, tags: ["bell"] }, "test");
				sent.push(ok ? `published to ntfy topic ${ntfy.config.topic}` : "ntfy did not take it (see the warning)");
			}
			if (script) {
				const run = runNotifyCommand(script, {
					url,
					asker,
					question: 'A test notification: press "It works"',
					event: "test",
					requestId: "test",
					actions: JSON.stringify({ v: 1, requestId: "test", asker, link: url, questions: [], buttons: [button] }),
					ntfyActions: ntfyActions({ buttons: [], decline: button }),
				});
				tests.add(run);
				void run.ended.then(() => tests.delete(run));
				const outcome = await run.done;
				sent.push(outcome.ok ? "the notify command ran" : `the notify command failed (${outcome.reason})`);
			}
			return `checkpoint-bridge: test notification: ${sent.join("; ")}; its "It works" button answers at ${url}`;
		},
		async close() {
			unwire();
			unwireNtfy();
			ntfy?.close();
			for (const run of tests) run.kill();
			await notifier.close();
		},
	};
}
