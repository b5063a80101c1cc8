/**
 * A transport: how an asker reaches a host (in this process, the local endpoint of a host in another,
 * a NATS room on another machine). Each is one folder under transports/ exporting a `Transport`, and
 * one line of the list in transports.ts, which finds a host without loading the transport's code.
 */
import type { Envelope } from "../../model/result.ts";
import type { RelayNotice } from "../shared/protocol.ts";
import type { SharedHandle } from "../shared/shared-handle.ts";
import type { CallOptions } from "./call.ts";

/** A host found one way: the transport's `kind`, and what its code needs to reach that host. */
export interface Reach {
	readonly kind: string;
	readonly [detail: string]: unknown;
}

/** Where an asker looks for a host from. */
export interface AskerPlace {
	/** The process's shared handle: a host of this process holds the role on it. */
	handle: SharedHandle;
	env: NodeJS.ProcessEnv;
	cwd: string;
}

/** Where a host tells the human what it serves, or why it cannot. */
export interface ServingNotices {
	notify(message: string, type?: "info" | "warning" | "error"): void;
}

/** A transport's code, loaded at the first call or claim that goes its way (or with the list, when it is small). */
export interface Transport<R extends Reach = Reach> {
	/** Sends one call to the host at `reach` and resolves with its envelope. */
	ask(reach: R, options: CallOptions, handle: SharedHandle): Promise<Envelope>;
	/** Hands another extension's notice to the host at `reach`; dropped when it cannot get there. */
	notice(reach: R, notice: Omit<RelayNotice, "v">, handle: SharedHandle): void | Promise<void>;
	/** The asking session is gone: the late ends it awaited this way go to the host's session. */
	releaseLate?(sessionId: string): void;
	/** The host's side, at a claim: serves askers this way and tells where, or why it cannot. */
	serve?(handle: SharedHandle, ui: ServingNotices): Promise<void>;
	/** The host's side, at a quit: stops serving, its askers told `note`. */
	close?(note: string): Promise<void>;
	/** Stopped before the host's requests end, so its askers with a grace wait for the next host; else after, and they get the end. */
	readonly closesFirst?: boolean;
}

/** A transport's line in the list: enough to find a host its way, or tell that a host serves it, without its code. */
export interface TransportEntry<R extends Reach = Reach> {
	/** Its name, the `kind` of what it finds. */
	readonly kind: R["kind"];
	/** A host reached this way now, `{ error }` naming a wrong setting, else undefined; read at every call. */
	find(at: AskerPlace): R | { readonly kind?: undefined; readonly error: string } | undefined;
	/** Whether a call along `reach` gets to its host, told at once; true when that cannot be told without a round trip. */
	reachable(reach: R): boolean;
	/** Whether a call that timed out this way can still get its end later: only from a host of another process, which keeps the request. */
	readonly lateEnds: boolean;
	/** Whether a host of this process serves askers this way: true, false, or `{ error }` naming a wrong setting. */
	serves(env: NodeJS.ProcessEnv): boolean | { readonly error: string };
	/** Its code; called once, on first use. */
	load(): Transport<R> | Promise<Transport<R>>;
}
