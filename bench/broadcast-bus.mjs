/**
 * The comparison baseline: the same handle, asker and host, but every reply goes out on one shared
 * "response" event that every waiting asker listens to. askViaHost already drops replies whose id
 * is not its own, so routing the per-request channels onto one event is the whole difference.
 */
import { EventEmitter } from "eventemitter3";
import { createHandle } from "../extensions/checkpoint-bridge/core/shared/shared-handle.ts";

const SHARED_EVENT = "response";
const route = (event) => (typeof event === "string" && event.startsWith("reply:") ? SHARED_EVENT : event);

class BroadcastBus extends EventEmitter {
	on(event, fn, context) {
		return super.on(route(event), fn, context);
	}
	off(event, fn, context, once) {
		return super.off(route(event), fn, context, once);
	}
	emit(event, ...args) {
		return super.emit(route(event), ...args);
	}
}

/** A handle like createHandle()'s (same host claim logic), whose replies are broadcast. */
export function broadcastHandle() {
	return Object.freeze({ ...createHandle(), bus: new BroadcastBus() });
}
