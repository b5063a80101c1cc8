/** The cross-process transport: what the extension wires in when it holds, or lacks, the host role. */
export { ENDPOINT_ENV, type EndpointAddress, endpointFromEnv } from "./address.ts";
export { askRemote, type RemoteAskOptions } from "./client.ts";
export { type Connected, type ConnectOptions, connectToHost, type HostConnection } from "./connect.ts";
export { closePooledConnections, DEFAULT_POOL_IDLE_MS, pooledConnectionCount } from "./pool.ts";
export { closeProcessEndpoint, ensureProcessEndpoint } from "./process-endpoint.ts";
export { type EndpointOptions, type LocalEndpoint, remoteAsker, startEndpoint } from "./server.ts";
