/**
 * Where a host's local endpoint is and how processes it spawns learn of it: the environment
 * variable CHECKPOINT_BRIDGE_ENDPOINT holds the absolute path of the socket, and the token file
 * is the file `token` in the same private directory.
 */
import path from "node:path";
import type { Reach } from "../../core/asking/transport.ts";

/** Set by the host in its own process.env while it holds the role; inherited by what it spawns. */
export const ENDPOINT_ENV = "CHECKPOINT_BRIDGE_ENDPOINT";

/** File names inside the endpoint's private directory. */
export const SOCKET_NAME = "socket";
const TOKEN_NAME = "token";

export interface EndpointAddress {
	/** Absolute path of the Unix domain socket. */
	socketPath: string;
	/** Absolute path of the token file beside it. */
	tokenPath: string;
}

/** A host in another process advertised its local endpoint (CHECKPOINT_BRIDGE_ENDPOINT, or for this working directory). */
export interface EndpointReach extends Reach {
	readonly kind: "endpoint";
	readonly endpoint: EndpointAddress;
}

/** The address of the socket at `socketPath`: the token is always its sibling. */
export function addressOf(socketPath: string): EndpointAddress {
	return { socketPath, tokenPath: path.join(path.dirname(socketPath), TOKEN_NAME) };
}

/** The endpoint advertised in `env`, or undefined when none is (or the value is not an absolute path). Read per call: a host may come and go. */
export function endpointFromEnv(env: NodeJS.ProcessEnv = process.env): EndpointAddress | undefined {
	const value = env[ENDPOINT_ENV]?.trim();
	if (!value || !path.isAbsolute(value)) return undefined;
	return addressOf(path.normalize(value));
}

/**
 * Advertises `socketPath` in `env` and returns the undo: it puts back what was there before
 * (the endpoint of an outer host, if this process was spawned by one), unless someone has
 * changed the variable since.
 */
export function advertise(env: NodeJS.ProcessEnv, socketPath: string): () => void {
	const previous = env[ENDPOINT_ENV];
	env[ENDPOINT_ENV] = socketPath;
	let undone = false;
	return () => {
		if (undone) return;
		undone = true;
		if (env[ENDPOINT_ENV] !== socketPath) return;
		if (previous === undefined) delete env[ENDPOINT_ENV];
		else env[ENDPOINT_ENV] = previous;
	};
}
