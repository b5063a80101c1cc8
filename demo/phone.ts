/**
 * The tour's phone (`npm run demo -- --tour`, scene 5): the notify command the tour sets. A phone
 * would show a notification with buttons; this one waits a few seconds, as a person reaching for
 * their phone does, then presses the button for PHONE_ANSWER: a one-tap POST to the link the host
 * gave for it (CHECKPOINT_BRIDGE_ACTIONS). Nothing is typed in the terminal. It acts on the scene's
 * question only; every other run of the command does nothing.
 */
import { fileURLToPath } from "node:url";

/** The scene's question starts so (demo/tour-model.ts asks it). */
export const PHONE_SCENE = "Tour 5 of 5:";
/** The option the phone picks: not the first, so the answer is plainly the phone's. */
export const PHONE_ANSWER = "5173";
/** How long the phone waits before it presses (within the notify command's 10 s). */
export const PHONE_WAIT_MS = 4_000;

async function press(): Promise<void> {
	if (process.env.CHECKPOINT_BRIDGE_EVENT !== "asked" || !process.env.CHECKPOINT_BRIDGE_QUESTION?.startsWith(PHONE_SCENE)) return;
	const actions = JSON.parse(process.env.CHECKPOINT_BRIDGE_ACTIONS ?? "{}") as { buttons?: { label: string; answer: string }[] };
	const button = actions.buttons?.find((b) => b.label === PHONE_ANSWER);
	if (!button) return;
	await new Promise((resolve) => setTimeout(resolve, PHONE_WAIT_MS));
	await fetch(button.answer, { method: "POST" });
}

// Run as the notify command, it presses; imported (by the tour's model, for the scene's words), it does nothing.
if (process.argv[1] === fileURLToPath(import.meta.url)) void press();
