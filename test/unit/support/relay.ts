/** A host role on a private handle, and an asker bound to it: the relay without pi. */
import { type AskOptions, askViaHost } from "../../../extensions/checkpoint-bridge/core/asking/asker.ts";
import { claimHostRole, type HostRoleOptions } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { PROTOCOL_VERSION, type RelayRequest } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import type { QuestionInput } from "../../../extensions/checkpoint-bridge/model/question.ts";
import type { Envelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { type FakeDialog, fakeUI } from "./fake-ui.ts";

export const HOST_SESSION = "host-session-id";

/** A request as an asker puts it on the bus, with 60 s of budget and of dialog time unless `over` says otherwise. */
export const relayRequest = (id: string, over: Partial<RelayRequest> = {}): RelayRequest => ({
	v: PROTOCOL_VERSION,
	id,
	asker: { label: "planner", sessionId: "planner-session" },
	questions: [{ question: "Name?" }],
	deadline: Date.now() + 60_000,
	dialogTimeoutMs: 60_000,
	createdAt: Date.now(),
	...over,
});

export type AskArgs = Partial<Omit<AskOptions, "handle" | "questions" | "asker">> & { label?: string; sessionId?: string };

export function relay(
	uiOptions: { respond?: (dialog: FakeDialog) => void; ignoreSignal?: boolean } = {},
	roleOptions: Partial<Omit<HostRoleOptions, "ui" | "sessionId">> = {},
	handle = createHandle(),
) {
	const fake = fakeUI(uiOptions);
	const role = claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: HOST_SESSION, ...roleOptions });
	if (!role) throw new Error("a fresh handle must accept the claim");
	const ask = (questions: QuestionInput[], args: AskArgs = {}) => {
		const { label = "child", sessionId = `${label}-session`, budgetMs = 300_000, dialogTimeoutMs = 180_000, ...rest } = args;
		return askViaHost({ handle, asker: { label, sessionId }, questions, budgetMs, dialogTimeoutMs, ...rest });
	};
	return { handle, fake, role, ask };
}

/** Lets queued microtasks and zero-delay timers run under fake timers. */
export const flush = async (vi: { advanceTimersByTimeAsync(ms: number): Promise<unknown> }) => {
	await vi.advanceTimersByTimeAsync(0);
};

/** Resolves-or-not probe: `envelope` is set once the call has settled. */
export function track(call: Promise<Envelope>): { envelope?: Envelope } {
	const state: { envelope?: Envelope } = {};
	void call.then((envelope) => (state.envelope = envelope));
	return state;
}
